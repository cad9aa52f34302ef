import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres

/// The shape of a demo run's traffic beyond the default batch.
struct DemoLoad {
    /// Notifications per second once the workers run (nil: all enqueued before they start).
    var publishRate: Double?
    /// Notifications of a campaign on the bulk lane, enqueued once the workers run.
    var bulkBacklog = 0
    /// Partitions of the bulk lane's intake (nil: as many as the backlog needs on the local cluster).
    var bulkPartitions: Int32?
    /// Notifications of a second app whose APNs key the simulator refuses.
    var refusedKeyNotifications = 0
    /// The demo app's fleet-wide FCM quota (`fleet_rate_limit_per_second`).
    var fcmFleetQuota: Int?

    /// The bulk intake's partitions: the local cluster keeps only about 5 MiB
    /// per partition and silently drops older data, so a big backlog is
    /// spread to about 2 MiB (~600 bytes a campaign message) per partition.
    func bulkIntakePartitions(default partitions: Int32) -> Int32 {
        if let bulkPartitions { return bulkPartitions }
        let needed = (bulkBacklog * 600 + (2 << 20) - 1) / (2 << 20)
        return max(partitions, Int32(clamping: needed))
    }
}

/// When each part of a steady demo run happened: the phases the figures
/// read from the ledger afterwards compare.
struct DemoTimeline {
    /// When the steady publishing began (an FCM outage is counted from here).
    var publishStart = Date()
    /// When FCM answered 503 to everything.
    var outage: DateInterval?
    /// Windows in which interactive traffic was published while the bulk backlog drained.
    var withBacklog: [DateInterval] = []
    /// The windows between them: the backlog draining with no interactive traffic.
    var backlogAlone: [DateInterval] = []
    /// The same interactive traffic, published after the backlog had drained.
    var afterBacklog: DateInterval?
    /// Campaign deliveries final, every half second while the backlog drains.
    var backlogProgress: [(at: Date, final: Int)] = []
    /// The healthy app's traffic alone, then beside the refused-key app's.
    var withoutRefusedKey: DateInterval?
    var withRefusedKey: DateInterval?

    /// The phases as `[start, end]` in seconds since 1970 (the backlog's
    /// windows as a list of them), for the summary.
    func json() -> JSONValue {
        func bounds(_ interval: DateInterval) -> JSONValue {
            .array([.double(interval.start.timeIntervalSince1970), .double(interval.end.timeIntervalSince1970)])
        }
        let phases: [(String, DateInterval?)] = [
            ("outage", outage), ("after_backlog", afterBacklog),
            ("without_refused_key", withoutRefusedKey), ("with_refused_key", withRefusedKey),
        ]
        let windows: [(String, [DateInterval])] = [("with_backlog", withBacklog), ("backlog_alone", backlogAlone)]
        return .object([("publish_start", .double(publishStart.timeIntervalSince1970))]
            + phases.compactMap { name, interval in interval.map { (name, bounds($0)) } }
            + windows.filter { !$0.1.isEmpty }.map { name, list in (name, .array(list.map(bounds))) })
    }
}

/// Publishes a steady demo run: the interactive notifications at `rate` per
/// second, in phases, and records when each phase happened.
///
/// - Bulk backlog (published to the bulk lane once the workers run): while
///   it drains, the interactive traffic in every other window of
///   `backlogWindow` seconds, none in the windows between, until half the
///   traffic is out or 90 % of the backlog is final; then, once it drained,
///   the rest of the traffic. Interactive latency with vs without the
///   backlog, and the backlog's drain rate with vs without interactive
///   traffic, come from one run however fast the backlog drains; the
///   windows alternate so both drain rates cover the same stretch of the
///   backlog (on the local cluster and ledger, later messages cost more).
/// - Refused-key app: half the healthy app's traffic alone, then the other
///   half with the refused-key app's notifications spread over the same time.
/// - Otherwise: all of it at the rate (an FCM outage starts at its offset
///   from the first message).
struct DemoTraffic {
    /// Seconds of each window with and without interactive traffic while a backlog drains.
    static let backlogWindow = 5.0
    let rate: Double
    let interactive: [DemoMessage]
    /// The campaign on the bulk lane (already published), nil without one.
    let backlog: DemoBatch?
    let backlogApp: String
    let refusedKey: [DemoMessage]
    let topics: TopicNames
    let bootstrap: String
    let databaseURL: String
    /// Rows of this run have a `created_at` from here on.
    let since: Date
    let logger: Logger

    func run(outageStart: Double?, outageSeconds: Double?, deadline: ContinuousClock.Instant) async throws -> DemoTimeline {
        // One producer for every phase, connected and knowing the intake's partitions before
        // the first message is created: a producer made per phase holds its first messages
        // until it has connected and fetched metadata (about a second while a backlog keeps
        // the local brokers busy), and that wait would count as the workers' latency.
        let producer = try KafkaProducer(bootstrapServers: bootstrap, properties: ["linger.ms": "5"], logger: logger)
        do {
            _ = try await producer.partitionCount(topic: topics.interactive.intake)
            let timeline = try await run(producer, outageStart: outageStart, outageSeconds: outageSeconds, deadline: deadline)
            await producer.close()
            return timeline
        } catch {
            await producer.close()
            throw error
        }
    }

    private func run(_ producer: KafkaProducer, outageStart: Double?, outageSeconds: Double?,
                     deadline: ContinuousClock.Instant) async throws -> DemoTimeline {
        var timeline = DemoTimeline()
        if let outageStart, let outageSeconds {
            timeline.outage = DateInterval(start: timeline.publishStart.addingTimeInterval(outageStart), duration: outageSeconds)
        }
        let intake = topics.interactive.intake
        let half = interactive.count / 2
        if let backlog {
            let progress = BacklogProgress(app: backlogApp, total: backlog.expectedDeliveries, since: since,
                                           databaseURL: databaseURL, logger: logger)
            let sampling = Task { await progress.sample(until: deadline) }
            let mostOfIt = backlog.expectedDeliveries * 9 / 10
            let perWindow = max(1, Int(exactly: (rate * Self.backlogWindow).rounded(.down)) ?? 1)
            var sent = 0
            while sent < half, progress.final < mostOfIt, ContinuousClock.now < deadline {
                let windowStart = Date()
                let beside = try await publish(producer, paced(interactive[sent..<min(half, sent + perWindow)], topic: intake)) {
                    progress.final >= mostOfIt
                }
                sent += beside.count
                timeline.withBacklog.append(DateInterval(start: windowStart, end: Date()))
                let quietStart = Date()
                while progress.final < mostOfIt, Date().timeIntervalSince(quietStart) < Self.backlogWindow {
                    try await Task.sleep(for: .milliseconds(100))
                }
                timeline.backlogAlone.append(DateInterval(start: quietStart, end: Date()))
            }
            say("  interactive traffic with the backlog draining: published \(sent) messages in \(timeline.withBacklog.count) windows of \(Int(Self.backlogWindow)) s, every other one")
            let drained = await sampling.value
            timeline.backlogProgress = progress.samples
            guard drained != nil else { throw CommandFailure("the bulk backlog did not drain in time") }
            say("  bulk backlog drained; interactive traffic alone")
            timeline.afterBacklog = try await publish(producer, paced(interactive[sent...], topic: intake)).span
        } else if !refusedKey.isEmpty {
            timeline.withoutRefusedKey = try await publish(producer, paced(interactive[..<half], topic: intake)).span
            say("  the refused-key app's traffic starts")
            let healthy = paced(interactive[half...], topic: intake)
            let span = Double(interactive.count - half) / rate
            let refused = refusedKey.enumerated().map { i, message in
                (at: span * Double(i) / Double(refusedKey.count), message: message, topic: intake)
            }
            timeline.withRefusedKey = try await publish(producer, (healthy + refused).sorted { $0.at < $1.at }).span
        } else {
            _ = try await publish(producer, paced(interactive[...], topic: intake))
        }
        return timeline
    }

    /// `messages` at `rate` per second from the start of their phase.
    private func paced(_ messages: ArraySlice<DemoMessage>, topic: String) -> [(at: Double, message: DemoMessage, topic: String)] {
        messages.enumerated().map { i, message in (Double(i) / rate, message, topic) }
    }

    /// Publishes each message when it is due, created then, until `stop` says
    /// so (asked before each message after the first), and returns the span
    /// from the first to the last and how many went (acknowledgements are
    /// awaited after).
    private func publish(_ producer: KafkaProducer, _ schedule: [(at: Double, message: DemoMessage, topic: String)],
                         stop: () -> Bool = { false }) async throws -> (span: DateInterval, count: Int) {
        let began = Date()
        var last = began
        var count = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            let start = ContinuousClock.now
            for entry in schedule {
                let due = start + .nanoseconds(Int64((entry.at * 1e9).rounded()))
                if due > .now { try await Task.sleep(until: due, clock: .continuous) }
                if count > 0, stop() { break }
                count += 1
                last = Date()
                let (topic, key, value) = (entry.topic, entry.message.key, entry.message.value(createdAt: last))
                group.addTask { try await producer.send(topic: topic, key: key, value: value) }
            }
            try await group.waitForAll()
        }
        return (DateInterval(start: began, end: last), count)
    }

    /// Publishes `messages` to `topic` as fast as the brokers take them
    /// (at most 10,000 awaiting acknowledgement), as they were generated.
    static func publishAll(_ messages: [DemoMessage], topic: String, bootstrap: String, logger: Logger) async throws {
        // Bigger producer batches for a big backlog: the mock broker answers a fetch with
        // one message set per partition, so tiny sets would make the fetches the limit.
        let producer = try KafkaProducer(bootstrapServers: bootstrap,
                                         properties: messages.count > 10_000 ? ["linger.ms": "100"] : [:], logger: logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight = 0
                for message in messages {
                    if inFlight >= 10_000 {
                        _ = try await group.next()
                        inFlight -= 1
                    }
                    // Raw: a batch deliberately carries messages that are not valid notifications.
                    let (key, value) = (message.key, message.value())
                    group.addTask { try await producer.send(topic: topic, key: key, value: value) }
                    inFlight += 1
                }
                try await group.waitForAll()
            }
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }
}

/// Watches a bulk backlog drain: its app's deliveries final, every half second.
final class BacklogProgress: Sendable {
    private let recorded = Locked<[(at: Date, final: Int)]>([])
    /// Every sample so far.
    var samples: [(at: Date, final: Int)] { recorded.withLock { $0 } }
    /// Deliveries final at the latest sample.
    var final: Int { recorded.withLock { $0.last?.final ?? 0 } }
    let app: String
    let total: Int
    let since: Date
    let databaseURL: String
    let logger: Logger

    init(app: String, total: Int, since: Date, databaseURL: String, logger: Logger) {
        self.app = app
        self.total = total
        self.since = since
        self.databaseURL = databaseURL
        self.logger = logger
    }

    /// Samples until every delivery of the backlog is final; returns when that
    /// was, nil if `deadline` came first.
    func sample(until deadline: ContinuousClock.Instant) async -> Date? {
        var connection: PostgresConnection?
        defer { connection?.close() }
        while ContinuousClock.now < deadline {
            do {
                if connection == nil { connection = try await PostgresConnection.connect(url: databaseURL, logger: logger) }
                let final = try await connection?.query(
                    """
                    SELECT count(*) AS n FROM deliveries WHERE app = $1 AND created_at >= $2
                      AND status NOT IN ('pending', 'retrying', 'parked')
                    """, [.text(app), .timestamp(since)]).rows.first?.count("n") ?? 0
                let now = Date()
                recorded.withLock { $0.append((now, final)) }
                if final >= total { return now }
            } catch {
                connection?.close()
                connection = nil
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return nil
    }
}
