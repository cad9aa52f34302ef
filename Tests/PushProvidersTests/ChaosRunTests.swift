import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("Done-when run: GOAWAY every 1,000 streams and random resets", .serialized)
struct ChaosRunTests {
    /// 10,000 notifications by default; `PUSHFLEET_CHAOS_COUNT=50000` for the full run.
    static let count = ProcessInfo.processInfo.environment["PUSHFLEET_CHAOS_COUNT"].flatMap(Int.init) ?? 10_000

    @Test("nothing lost; a duplicate only where a reset cut off a processed response")
    func goawayAndResets() async throws {
        let scenarios = [
            SimulatorScenario(fault: .goaway(afterStreams: 1000)),
            SimulatorScenario(fault: .resetConnection(atRequest: 400, processed: true), share: 0.3),
            SimulatorScenario(fault: .resetConnection(atRequest: 700, processed: false), share: 0.3),
        ]
        try await withLiveStack(configure: { $0.scenarios = scenarios }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 2)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let ids = (0..<Self.count).map { _ in UUID().uuidString.lowercased() }
            let started = ContinuousClock.now
            let outcome = try await Self.sendAll(apns, ids, window: 400)
            let elapsed = ContinuousClock.now - started
            let stats = stack.simulator.stats()
            let accepted = ids.filter { (stats.apnsSendsByID[$0] ?? 0) >= 1 }.count
            let duplicated = ids.filter { (stats.apnsSendsByID[$0] ?? 0) > 1 }
            let unexplained = duplicated.filter { stats.apnsUnansweredIDs[$0] == nil }
            let lost = ids.count - outcome.accepted
            let client = apns.stats()
            print("""
                chaos run: sent \(ids.count), answered 200 \(outcome.accepted), accepted by the simulator \(accepted) \
                (apnsAccepted \(stats.apnsAccepted)), lost \(lost), duplicated \(duplicated.count) \
                (processed-then-reset \(stats.apnsUnansweredIDs.count), unexplained \(unexplained.count)), \
                re-sent without status \(client.resentWithoutStatus), caller retries \(outcome.callerRetries), \
                GOAWAYs \(stats.goawaysSent), streams refused by GOAWAY \(stats.streamsRefusedByGoaway), \
                resets \(stats.connectionsReset), connections \(stats.connectionsAccepted), in \(elapsed)
                """)
            #expect(lost == 0)
            #expect(accepted == ids.count)
            #expect(duplicated.count <= stats.apnsUnansweredIDs.count)
            #expect(unexplained.isEmpty, "every duplicate is an id whose processed answer a reset cut off")
            #expect(stats.goawaysSent >= 1)
            #expect(stats.connectionsReset >= 1)
            #expect(client.resentWithoutStatus >= 1)
            #expect(client.circuitState == .closed)
        }
    }

    /// Sends every id with at most `window` in flight; a retriable error with no
    /// status (the client's own re-sends used up) is retried as the worker would.
    static func sendAll(_ apns: APNsClient, _ ids: [String], window: Int) async throws -> (accepted: Int, callerRetries: Int) {
        try await withThrowingTaskGroup(of: (Bool, Int).self) { group in
            var next = 0
            var accepted = 0
            var retries = 0
            func add() {
                let n = next
                next += 1
                group.addTask {
                    var attempts = 0
                    while true {
                        do {
                            let response = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: ids[n]))
                            return (response.status == 200, attempts)
                        } catch let error as HTTPError where error.isRetriable && !error.statusReceived && attempts < 5 {
                            attempts += 1
                        }
                    }
                }
            }
            while next < min(window, ids.count) { add() }
            while let (ok, attempts) = try await group.next() {
                if ok { accepted += 1 }
                retries += attempts
                if next < ids.count { add() }
            }
            return (accepted, retries)
        }
    }
}
