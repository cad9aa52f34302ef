import Foundation
import PushTestSupport

/// Who owned which partition when, read back from the workers' JSON logs
/// (PushKafka's `Kafka partitions assigned / revoked / lost` lines, with
/// millisecond timestamps): the time to a first assignment, and how long
/// partitions had no owner while they moved.
enum RebalanceTimeline {
    struct Event {
        enum Kind: String { case assigned, revoked, lost }
        var time: Date
        var worker: String
        var kind: Kind
        var partitions: [String]
    }

    /// The events of consumer group `group` in the logs `(worker, log text)`, in time order.
    static func events(_ logs: [(worker: String, log: String)], group: String) -> [Event] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var events: [Event] = []
        for (worker, log) in logs {
            for line in log.split(separator: "\n") where line.contains("Kafka partitions") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let message = object["message"] as? String, let stamp = object["timestamp"] as? String,
                      let time = formatter.date(from: stamp), let metadata = object["metadata"] as? [String: String],
                      metadata["kafka.group"] == group else { continue }
                let kind: Event.Kind
                switch message {
                case "Kafka partitions assigned": kind = .assigned
                case "Kafka partitions revoked": kind = .revoked
                case "Kafka partitions lost": kind = .lost
                default: continue
                }
                let partitions = (metadata["kafka.partitions"] ?? "").split(separator: ",").map(String.init)
                events.append(Event(time: time, worker: worker, kind: kind, partitions: partitions))
            }
        }
        return events.sorted { $0.time < $1.time }
    }

    /// Seconds each revoke of `group` spent in the worker's rebalance handler
    /// (draining the revoked partitions' in-flight work) before librdkafka could go on:
    /// from PushKafka's `Kafka partitions revoked` to the worker's `partitions revoked`.
    static func revokeDrains(_ logs: [(worker: String, log: String)], group: String) -> [Double] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var drains: [Double] = []
        for (_, log) in logs {
            var started: Date?
            for line in log.split(separator: "\n") where line.contains("partitions revoked") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let message = object["message"] as? String, let stamp = object["timestamp"] as? String,
                      let time = formatter.date(from: stamp) else { continue }
                let metadata = object["metadata"] as? [String: String] ?? [:]
                if message == "Kafka partitions revoked", metadata["kafka.group"] == group {
                    started = time
                } else if message == "partitions revoked", let begin = started {
                    drains.append(time.timeIntervalSince(begin))
                    started = nil
                }
            }
        }
        return drains
    }

    /// Seconds from `started` to `worker`'s first assignment of at least one partition (nil: none yet).
    static func firstAssignment(_ events: [Event], worker: String, started: Date) -> Double? {
        events.first { $0.worker == worker && $0.kind == .assigned && !$0.partitions.isEmpty }
            .map { $0.time.timeIntervalSince(started) }
    }

    /// Partition → owner after `events`, leaving out the partitions of workers that
    /// died (killed: they never log a revoke).
    static func owners(_ events: [Event], dead: Set<String> = []) -> [String: String] {
        var owner: [String: String] = [:]
        for event in events {
            for p in event.partitions {
                if event.kind == .assigned { owner[p] = event.worker } else if owner[p] == event.worker { owner[p] = nil }
            }
        }
        return owner.filter { !dead.contains($0.value) }
    }

    /// The time of the first event after which `total` partitions are owned by live
    /// workers and each of `including` owns one (nil: not yet). Events before `after` do not count.
    static func settled(_ events: [Event], total: Int, dead: Set<String>, including: Set<String>, after: Date) -> Date? {
        for end in events.indices where events[end].time >= after {
            let owners = Self.owners(Array(events[...end]), dead: dead)
            if owners.count >= total, Set(owners.values).isSuperset(of: including) { return events[end].time }
        }
        return nil
    }

    /// The longest time a partition had no owner, for owners lost or given up from
    /// `from` on (a revoke or a loss in the logs, or a worker killed at `killed`, whose
    /// partitions it held then), until another worker was assigned it (or `until`).
    static func longestOwnerless(_ events: [Event], from: Date, until: Date,
                                 killed: (worker: String, at: Date)? = nil) -> Double {
        var owner: [String: String] = [:]
        var ownerlessSince: [String: Date] = [:]
        var longest = 0.0
        var killHandled = false
        func release(_ partitions: [String], by worker: String, at time: Date) {
            for p in partitions where owner[p] == worker {
                owner[p] = nil
                if time >= from { ownerlessSince[p] = time }
            }
        }
        for event in events where event.time <= until {
            if let killed, !killHandled, event.time >= killed.at {
                killHandled = true
                release(owner.filter { $0.value == killed.worker }.map(\.key), by: killed.worker, at: killed.at)
            }
            switch event.kind {
            case .assigned:
                for p in event.partitions {
                    if let since = ownerlessSince.removeValue(forKey: p) { longest = max(longest, event.time.timeIntervalSince(since)) }
                    owner[p] = event.worker
                }
            case .revoked, .lost:
                release(event.partitions, by: event.worker, at: event.time)
            }
        }
        for since in ownerlessSince.values { longest = max(longest, until.timeIntervalSince(since)) }
        return longest
    }
}
