import Foundation
import PushCore
import PushKafka
import PushPostgres

/// `pushfleet dlq list`: what is dead-lettered, why, and whether it was
/// replayed, read the way a replay reads (by offsets, in chunks, nothing
/// committed) and changing nothing.
extension DeadLetterReplay {
    /// One dead letter as the list shows it.
    public struct Listed: Sendable, Equatable {
        /// `topic/partition/offset` of the dead letter.
        public var origin: String
        /// When it was written to the dead-letter topic (its Kafka timestamp), when known.
        public var deadLetteredAt: Date?
        public var reason: String
        public var notificationID: UUID?
        public var app: String?
        /// When `pushfleet dlq replay` replayed it (the last time); nil if it never did.
        public var replayedAt: Date?
        /// The notification's ledger rows now, by status, most first; empty when the
        /// ledger has none (a message that never became a notification, or rows past retention).
        public var ledger: [LedgerCount]
    }

    /// Ledger rows with one status.
    public struct LedgerCount: Sendable, Equatable {
        public var status: String
        public var rows: Int
    }

    /// What a list run read.
    public struct ListReport: Sendable {
        /// Dead letters listed (chosen by the filters).
        public var count = 0
        /// Of those, replayed before.
        public var replayed = 0
        /// Messages the filters did not choose (or, with `notReplayedOnly`, replayed ones).
        public var skipped = 0
        /// What was read of each partition, against the end the broker reported.
        public var partitions: [KafkaPartitionScan] = []

        public var readToEnd: Bool { partitions.allSatisfy(\.reachedEnd) }
    }

    /// Reads the dead-letter topic and tells `each` about every dead letter
    /// `filter` chooses (at most `filter.limit`; `again` is ignored), with
    /// whether it was replayed and what its notification's ledger rows say
    /// now. With `notReplayedOnly`, only those never replayed.
    public func list(topics: TopicNames, filter: Filter, notReplayedOnly: Bool = false,
                     each: (Listed) -> Void) async throws -> ListReport {
        var report = ListReport()
        report.partitions = try await reader.scan(topic: topics.deadLetter) { messages in
            let replays = try await replayedOrigins(topics.deadLetter, of: messages)
            let chosen = messages.compactMap { message -> (KafkaMessage, String, ListedBody)? in
                let reason = RetryHeaders(message: message).reason ?? ""
                let body = ListedBody(message.value)
                guard filter.chooses(reason: reason, notificationID: body.id) else { return nil }
                return (message, reason, body)
            }
            report.skipped += messages.count - chosen.count
            let ledger = try await ledgerCounts(of: Set(chosen.compactMap(\.2.id)))
            for (message, reason, body) in chosen {
                guard report.count < filter.limit else { return false }
                let replayedAt = replays[Self.originKey(message)]
                if notReplayedOnly, replayedAt != nil { report.skipped += 1; continue }
                report.count += 1
                if replayedAt != nil { report.replayed += 1 }
                each(Listed(origin: "\(message.topic)/\(message.partition)/\(message.offset)", deadLetteredAt: message.timestamp,
                            reason: reason, notificationID: body.id, app: body.app, replayedAt: replayedAt,
                            ledger: body.id.flatMap { ledger[$0] } ?? []))
            }
            return report.count < filter.limit
        }
        return report
    }

    /// What a listed dead letter's body names: its notification id and app.
    struct ListedBody {
        var id: UUID?
        var app: String?

        init(_ value: [UInt8]) {
            guard let json = try? JSONValue.parse(value) else { return }
            id = json["id"]?.stringValue.flatMap(UUID.init(uuidString:))
            app = json["app"]?.stringValue.map { String($0.prefix(IntakeLimits.maxAppLength)) }
        }
    }

    /// The ledger rows of each notification, by status: one query per chunk.
    private func ledgerCounts(of ids: Set<UUID>) async throws -> [UUID: [LedgerCount]] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT notification_id::text AS id, status, count(*) AS n FROM deliveries
            WHERE notification_id = ANY($1::uuid[])
            GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2
            """, [.uuidArray(Array(ids))])
        var out: [UUID: [LedgerCount]] = [:]
        for row in rows.rows {
            guard let id = row["id"].flatMap(UUID.init(uuidString:)), let status = row["status"] else { continue }
            out[id, default: []].append(LedgerCount(status: status, rows: Int(try row.int("n") ?? 0)))
        }
        return out
    }
}
