import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushWorker

/// Enqueue → accepted of the deliveries of one phase (and platform), from
/// the ledger: `accepted_at − enqueued_at` (the intake message's Kafka
/// timestamp, else the notification's `created_at`), in seconds.
struct DemoLatency {
    var phase: String
    /// A platform, or `all`.
    var platform: String
    var deliveries: Int
    var accepted: Int
    var p50: Double?
    var p99: Double?
    var max: Double?

    func json() -> JSONValue {
        func seconds(_ value: Double?) -> JSONValue { value.map { .double(($0 * 1000).rounded() / 1000) } ?? .null }
        return .object([
            ("phase", .string(phase)), ("platform", .string(platform)),
            ("deliveries", .int(Int64(deliveries))), ("accepted", .int(Int64(accepted))),
            ("p50_seconds", seconds(p50)), ("p99_seconds", seconds(p99)), ("max_seconds", seconds(max)),
        ])
    }
}

/// Messages on the lanes' parked topics, and the deliveries they carried.
struct DemoParked {
    /// Messages ever produced to `push.parked` and `push.parked.bulk` (high watermarks).
    var messages = 0
    /// Deliveries (notification, token) parked at least once, from the messages still readable.
    var heldDeliveries = 0
    /// The most messages one delivery was parked in.
    var maxPerDelivery = 0
    /// Messages the local cluster no longer had to read (it keeps ~5 MiB per partition).
    var unreadable = 0

    var perHeldDelivery: Double? { heldDeliveries > 0 ? Double(messages) / Double(heldDeliveries) : nil }
}

/// A bulk backlog's drain: deliveries final per second beside interactive traffic and alone.
struct DemoDrain {
    var withInteractive: Double?
    var alone: Double?

    /// The rates from the backlog's progress samples over the windows with
    /// interactive traffic and over those without (deliveries final between
    /// each window's first and last sample, over the time between them).
    init(_ timeline: DemoTimeline) {
        let samples = timeline.backlogProgress
        func rate(_ windows: [DateInterval]) -> Double? {
            var final = 0
            var seconds = 0.0
            for window in windows {
                let inside = samples.filter { window.contains($0.at) }
                guard let first = inside.first, let last = inside.last, last.at > first.at else { continue }
                final += last.final - first.final
                seconds += last.at.timeIntervalSince(first.at)
            }
            return seconds > 0 ? Double(final) / seconds : nil
        }
        withInteractive = rate(timeline.withBacklog)
        alone = rate(timeline.backlogAlone)
    }
}

/// Reads a run's figures from the ledger and the topics.
enum DemoFigures {
    /// Latency per phase (a delivery belongs to the phase its enqueue time
    /// falls in) of `app`'s deliveries since `since`, per platform or all together.
    static func latencies(on connection: PostgresConnection, app: String, since: Date,
                          phases: [(name: String, interval: DateInterval)], byPlatform: Bool,
                          platform: String? = nil) async throws -> [DemoLatency] {
        guard !phases.isEmpty else { return [] }
        let lateness = "extract(epoch FROM d.accepted_at - coalesce(d.enqueued_at, d.created_at))"
        let rows = try await connection.query(
            """
            SELECT p.name AS phase, CASE WHEN $6 THEN d.platform ELSE 'all' END AS platform,
                   count(*) AS n, count(d.accepted_at) AS accepted,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY \(lateness)) AS p50,
                   percentile_cont(0.99) WITHIN GROUP (ORDER BY \(lateness)) AS p99,
                   max(\(lateness)) AS max
            FROM deliveries d
            JOIN unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) WITH ORDINALITY AS p(name, s, e, i)
              ON coalesce(d.enqueued_at, d.created_at) >= p.s AND coalesce(d.enqueued_at, d.created_at) < p.e
            WHERE d.app = $1 AND d.created_at >= $2 AND ($7::text IS NULL OR d.platform = $7)
            GROUP BY p.name, 2 ORDER BY min(p.i), 2
            """,
            [.text(app), .timestamp(since), .textArray(phases.map(\.name)), .timestampArray(phases.map(\.interval.start)),
             .timestampArray(phases.map(\.interval.end)), .bool(byPlatform), platform.map { .text($0) } ?? .null])
        return rows.rows.map { row in
            DemoLatency(phase: row["phase"] ?? "?", platform: row["platform"] ?? "?", deliveries: row.count("n") ?? 0,
                        accepted: row.count("accepted") ?? 0, p50: row["p50"].flatMap(Double.init),
                        p99: row["p99"].flatMap(Double.init), max: row["max"].flatMap(Double.init))
        }
    }

    /// Deliveries per app, platform and status.
    static func byApp(on connection: PostgresConnection, apps: [String], since: Date) async throws -> [String: Int] {
        let rows = try await connection.query(
            "SELECT app, platform, status, count(*) AS n FROM deliveries WHERE app = ANY($1::text[]) AND created_at >= $2 GROUP BY 1, 2, 3",
            [.textArray(apps), .timestamp(since)])
        var out: [String: Int] = [:]
        for row in rows.rows { out["\(row["app"] ?? "?")|\(row["platform"] ?? "?")|\(row["status"] ?? "?")"] = row.count("n") ?? 0 }
        return out
    }

    /// Messages ever produced to `topics` (the sum of their partitions' high
    /// watermarks; `partitions` says how many each has).
    static func produced(to topics: [String], partitions: (String) -> Int32, bootstrap: String, logger: Logger) async throws -> Int {
        let reader = try KafkaPartitionReader(bootstrapServers: bootstrap, groupID: "demo-counter-\(UUID().uuidString)", logger: logger)
        var total = 0
        do {
            for topic in topics {
                for partition in 0..<partitions(topic) {
                    total += Int(try await reader.reportedRange(KafkaTopicPartition(topic: topic, partition: partition)).end)
                }
            }
        } catch {
            await reader.close()
            throw error
        }
        await reader.close()
        return total
    }

    /// Reads both lanes' parked topics to their end (by assignment, joining no
    /// group) and counts the deliveries their messages carried.
    static func parked(topics: TopicNames, partitions: (String) -> Int32, bootstrap: String, logger: Logger) async throws -> DemoParked {
        let parkedTopics = [topics.interactive.parked, topics.bulk.parked]
        var result = DemoParked()
        result.messages = try await produced(to: parkedTopics, partitions: partitions, bootstrap: bootstrap, logger: logger)
        guard result.messages > 0 else { return result }
        let reader = try KafkaPartitionReader(bootstrapServers: bootstrap, groupID: "demo-parked-reader-\(UUID().uuidString)", logger: logger)
        var parks: [String: Int] = [:]
        var read = 0
        do {
            for topic in parkedTopics {
                try await reader.scan(topic: topic) { messages in
                    read += messages.count
                    for m in messages {
                        guard case .success(let n) = PushNotification.decode(m.value) else { continue }
                        for r in n.recipients { parks["\(n.id)|\(r.token)", default: 0] += 1 }
                    }
                    return true
                }
            }
        } catch {
            await reader.close()
            throw error
        }
        await reader.close()
        result.heldDeliveries = parks.count
        result.maxPerDelivery = parks.values.max() ?? 0
        result.unreadable = result.messages - read
        return result
    }
}
