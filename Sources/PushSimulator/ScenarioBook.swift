import PushCore
import Foundation

/// The live scenarios and their counters, shared by every connection; replaced
/// as a whole by `setScenarios(_:)`, which also restarts the counters and the clock.
final class ScenarioBook: Sendable {
    private struct Entry {
        let scenario: SimulatorScenario
        /// Matching requests seen so far.
        var seen = 0
        /// Events that passed every gate but `share`.
        var eligible = 0
        /// Times the fault fired.
        var fired = 0
    }

    private struct Storage {
        var entries: [Entry]
        var epoch: Date
    }

    private let storage: Locked<Storage>

    init(_ scenarios: [SimulatorScenario], epoch: Date) {
        storage = Locked(Storage(entries: scenarios.map { Entry(scenario: $0) }, epoch: epoch))
    }

    /// Replaces every scenario; windows are counted from `epoch`.
    func replace(with scenarios: [SimulatorScenario], epoch: Date) {
        storage.withLock { $0 = Storage(entries: scenarios.map { Entry(scenario: $0) }, epoch: epoch) }
    }

    var scenarios: [SimulatorScenario] {
        storage.withLock { $0.entries.map(\.scenario) }
    }

    var isEmpty: Bool {
        storage.withLock { $0.entries.isEmpty }
    }

    /// Counts one finished request of `provider` towards every scenario it matches.
    func noteRequest(provider: String) {
        storage.withLock { storage in
            for index in storage.entries.indices where storage.entries[index].scenario.matches(provider: provider) {
                storage.entries[index].seen += 1
            }
        }
    }

    /// The first live fault accepted by `predicate` for a request of `provider`
    /// (nil: a connection-level event), counting it as fired.
    func take(
        provider: String?, now: Date, where predicate: (SimulatorScenario.Fault) -> Bool
    ) -> SimulatorScenario.Fault? {
        storage.withLock { storage in
            let epoch = storage.epoch
            for index in storage.entries.indices {
                var entry = storage.entries[index]
                let scenario = entry.scenario
                if let provider {
                    guard !scenario.fault.isConnectionLevel, scenario.matches(provider: provider) else { continue }
                } else {
                    guard scenario.fault.isConnectionLevel else { continue }
                }
                guard predicate(scenario.fault), entry.seen >= scenario.afterRequests else { continue }
                if let count = scenario.count, entry.fired >= count { continue }
                if scenario.startSeconds != nil || scenario.durationSeconds != nil {
                    let start = epoch.addingTimeInterval(scenario.startSeconds ?? 0)
                    guard now >= start else { continue }
                    if let duration = scenario.durationSeconds, now >= start.addingTimeInterval(duration) { continue }
                }
                if let share = scenario.share {
                    let before = entry.eligible
                    entry.eligible += 1
                    let hit = Int((Double(before + 1) * share).rounded(.down)) > Int((Double(before) * share).rounded(.down))
                    guard hit else {
                        storage.entries[index] = entry
                        continue
                    }
                }
                entry.fired += 1
                storage.entries[index] = entry
                return scenario.fault
            }
            return nil
        }
    }
}
