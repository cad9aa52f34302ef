import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres

/// `pushfleet dlq replay`: re-publishes chosen dead letters to the intake
/// topic so they are sent again. A replay is an operator's explicit decision,
/// so the ledger is told first: the dead-lettered deliveries the message
/// carries move back to `pending` (with `replayed_at`, `replay_of`,
/// `replays`), which the worker's ledger check does not suppress, and start a
/// new attempt series (`attempts` 0, no first attempt); the series they end
/// is kept in `delivery_replays`, so the dead letter stays in the views and
/// the report. The dead letter is recorded in `dlq_replays`, so a later run
/// (with any filter) does not replay it twice. The topic is read by offsets,
/// never through a consumer group: nothing is committed, skipped messages
/// stay for later runs, and a run takes seconds, not a group join.
/// `pushfleet dlq list` reads the topic the same way (`list`).
public struct DeadLetterReplay: Sendable {
    /// Which dead letters to replay.
    public struct Filter: Sendable {
        /// Only messages whose reason (the `pushfleet-dlq-reason` header)
        /// contains this text, whatever the case of either.
        public var reasonContains: String?
        /// Only the dead letters of this notification.
        public var notificationID: UUID?
        /// At most this many.
        public var limit = Int.max
        /// Replay also what an earlier run replayed.
        public var again = false

        public init(reasonContains: String? = nil, notificationID: UUID? = nil, limit: Int = .max, again: Bool = false) {
            self.reasonContains = reasonContains
            self.notificationID = notificationID
            self.limit = limit
            self.again = again
        }
    }

    /// One chosen dead letter.
    public struct Entry: Sendable, Equatable {
        /// `topic/partition/offset` of the dead letter.
        public var origin: String
        public var reason: String
        public var notificationID: UUID?
        /// Dead-lettered ledger rows it moved (or, on a dry run, would move) back to `pending`.
        public var ledgerRows: Int
    }

    /// What a run did (or, on a dry run, would do).
    public struct Report: Sendable {
        /// The first `maxListed` dead letters replayed (or chosen); `count` counts them all.
        public var replayed: [Entry] = []
        /// Dead letters replayed (or, on a dry run, chosen).
        public var count = 0
        /// Messages the filters did not choose.
        public var skipped = 0
        /// Chosen messages an earlier run already replayed (not replayed again without `again`).
        public var alreadyReplayed = 0
        /// What was read of each partition of the dead-letter topic, against the end
        /// the broker reported (which is not trusted as the end: `KafkaPartitionScan`).
        public var partitions: [KafkaPartitionScan] = []

        /// Whether every partition was read to its end: false when `limit` stopped the run,
        /// so dead letters past what was read may exist.
        public var readToEnd: Bool { partitions.allSatisfy(\.reachedEnd) }
        /// Dead letters read at or past the end the broker reported (which a reader
        /// stopping there would have missed).
        public var pastReportedEnd: Int { partitions.reduce(0) { $0 + $1.pastReportedEnd } }

        /// The most entries a report lists (a run over a flood of dead letters
        /// counts them all but does not hold them all).
        public static let maxListed = 10_000
    }

    let reader: KafkaPartitionReader
    let producer: KafkaProducer?
    let connection: PostgresConnection
    let logger: Logger

    /// `producer` may be nil for a dry run.
    public init(reader: KafkaPartitionReader, producer: KafkaProducer?, connection: PostgresConnection, logger: Logger) {
        self.reader = reader
        self.producer = producer
        self.connection = connection
        self.logger = logger
    }

    /// Reads the dead-letter topic in chunks (a topic of millions of dead
    /// letters is never held whole), each partition to the end its fetch
    /// reaches, and replays what `filter` chooses, in offset order per
    /// partition; `each` hears of every replayed (or, on a dry run, chosen)
    /// dead letter as it happens. The report lists the first
    /// `Report.maxListed` of them, counts all, and says what was read of each
    /// partition against the end the broker reported.
    public func run(topics: TopicNames, filter: Filter, dryRun: Bool,
                    each: (Entry) -> Void = { _ in }) async throws -> Report {
        var report = Report()
        report.partitions = try await reader.scan(topic: topics.deadLetter) { messages in
            // Per chunk: what an earlier run replayed of these (never the whole table).
            let done = filter.again ? [:] : try await replayedOrigins(topics.deadLetter, of: messages)
            for message in messages {
                guard report.count < filter.limit else { return false }
                if let entry = try await consider(message, filter: filter, done: done, dryRun: dryRun,
                                                  intakeTopic: topics.intake, report: &report) {
                    report.count += 1
                    if report.replayed.count < Report.maxListed { report.replayed.append(entry) }
                    each(entry)
                }
            }
            return report.count < filter.limit
        }
        return report
    }

    /// One dead letter: skipped (counted in `report`), or replayed (or, on a dry run, chosen).
    private func consider(_ message: KafkaMessage, filter: Filter, done: [String: Date], dryRun: Bool, intakeTopic: String,
                          report: inout Report) async throws -> Entry? {
        let reason = RetryHeaders(message: message).reason ?? ""
        let body = Self.body(message.value)
        guard filter.chooses(reason: reason, notificationID: body.id) else { report.skipped += 1; return nil }
        if !filter.again, done[Self.originKey(message)] != nil { report.alreadyReplayed += 1; return nil }
        let origin = "\(message.topic)/\(message.partition)/\(message.offset)"
        let rows: Int
        if dryRun {
            rows = try await movableRows(body)
        } else {
            rows = try await markReplayed(message, body: body, origin: origin, reason: reason)
            do {
                guard let producer else { throw ReplayError("no producer for a replay") }
                try await producer.send(topic: intakeTopic, key: message.key, value: message.value,
                                        headers: [("pushfleet-replayed-from", Array(origin.utf8))])
            } catch {
                // Not published: the ledger goes back to what it said, and the trail with it.
                try await unmark(message, origin: origin)
                throw error
            }
        }
        logger.info(dryRun ? "would replay dead letter" : "dead letter replayed", metadata: [
            "kafka.origin": "\(origin)", "push.notification_id": "\(body.id?.uuidString.lowercased() ?? "-")",
            "dlq.reason": "\(reason.prefix(200))", "dlq.ledger_rows": "\(rows)", "dlq.dry_run": "\(dryRun)",
        ])
        return Entry(origin: origin, reason: reason, notificationID: body.id, ledgerRows: rows)
    }

    /// What a dead letter's body says about its ledger rows: the notification
    /// id and the tokens it carries (empty: every dead-lettered row of the id,
    /// as when a recipient is a user id resolved at send time). Anything that
    /// is not a notification has no id and no rows.
    struct Body: Sendable {
        var id: UUID?
        var tokens: [String] = []
    }

    static func body(_ value: [UInt8]) -> Body {
        guard let json = try? JSONValue.parse(value), let id = json["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
            return Body()
        }
        var tokens: [String] = []
        if case .array(let recipients)? = json["recipients"] {
            for recipient in recipients {
                if let token = recipient["token"]?.stringValue {
                    tokens.append(token)
                } else if let topic = recipient["topic"]?.stringValue {
                    tokens.append("topic:" + topic)
                } else if let condition = recipient["condition"]?.stringValue {
                    tokens.append("condition:" + condition)
                } else {
                    return Body(id: id)  // a user id: its devices were resolved at send time
                }
            }
        }
        return Body(id: id, tokens: tokens)
    }

    static func originKey(_ message: KafkaMessage) -> String { "\(message.partition)/\(message.offset)" }

    /// Which of `messages` an earlier run replayed, and when (by `originKey`): one primary-key probe each.
    func replayedOrigins(_ topic: String, of messages: [KafkaMessage]) async throws -> [String: Date] {
        guard !messages.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT r.dlq_partition::text || '/' || r.dlq_offset::text AS k, r.replayed_at AS at
              FROM unnest($2::int8[], $3::int8[]) AS m(p, o)
              JOIN dlq_replays r ON r.dlq_topic = $1 AND r.dlq_partition = m.p AND r.dlq_offset = m.o
            """,
            [.text(topic), .intArray(messages.map { Int64($0.partition) }), .intArray(messages.map(\.offset))])
        var out: [String: Date] = [:]
        for row in rows.rows {
            if let key = row["k"], let at = try row.date("at") { out[key] = at }
        }
        return out
    }

    private static let rowsPredicate = """
        notification_id = $1 AND status = 'dead_lettered' AND (cardinality($2::text[]) = 0 OR token = ANY($2::text[]))
        """

    private func movableRows(_ body: Body) async throws -> Int {
        guard let id = body.id else { return 0 }
        let rows = try await connection.query(
            "SELECT count(*) AS n FROM deliveries WHERE \(Self.rowsPredicate)",
            [.uuid(id), .textArray(body.tokens.map { $0.storableText })])
        return Int(try rows.first?.int("n") ?? 0)
    }

    /// Keeps the series the rows end in `delivery_replays`, moves the rows back to
    /// `pending` with the trail and a new series, and records the dead letter as replayed.
    private func markReplayed(_ message: KafkaMessage, body: Body, origin: String, reason: String) async throws -> Int {
        try await connection.transaction { tx in
            var moved = 0
            if let id = body.id {
                let binds: [PostgresValue] = [.uuid(id), .textArray(body.tokens.map { $0.storableText }), .text(origin)]
                // Locked here, so the rows moved below are the rows kept (one transaction, one now()).
                try await tx.query(
                    """
                    INSERT INTO delivery_replays (notification_id, created_at, token, app, platform, replayed_at, replay_of,
                        dead_lettered_at, attempts, first_attempt_at, provider_reason, detail)
                    SELECT notification_id, created_at, token, app, platform, now(), $3,
                           final_at, attempts, first_attempt_at, provider_reason, detail
                    FROM deliveries WHERE \(Self.rowsPredicate)
                    FOR UPDATE
                    """, binds)
                moved = try await tx.query(
                    """
                    UPDATE deliveries SET status = 'pending', final_at = NULL, attempts = 0, first_attempt_at = NULL,
                        replayed_at = now(), replay_of = $3, replays = replays + 1, detail = 'replayed from ' || $3, updated_at = now()
                    WHERE \(Self.rowsPredicate)
                    """, binds).affectedRows
            }
            try await tx.query(
                """
                INSERT INTO dlq_replays (dlq_topic, dlq_partition, dlq_offset, notification_id, reason, ledger_rows)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (dlq_topic, dlq_partition, dlq_offset) DO UPDATE SET
                    replayed_at = now(), ledger_rows = EXCLUDED.ledger_rows
                """,
                [.text(message.topic), .int(Int64(message.partition)), .int(message.offset), body.id.map(PostgresValue.uuid) ?? .null,
                 .text(reason.storableText), .int(Int64(moved))])
            return moved
        }
    }

    /// Puts back what `markReplayed` changed: each row as `delivery_replays` kept it
    /// (status, series, reason), its trail as the replay before left it, and no record
    /// of this replay.
    private func unmark(_ message: KafkaMessage, origin: String) async throws {
        try await connection.transaction { tx in
            try await tx.query(
                """
                WITH kept AS (
                    DELETE FROM delivery_replays r USING deliveries d
                    WHERE r.replay_of = $1 AND d.notification_id = r.notification_id AND d.token = r.token
                      AND d.created_at = r.created_at AND d.status = 'pending' AND d.replay_of = $1 AND d.replayed_at = r.replayed_at
                    RETURNING r.*
                )
                UPDATE deliveries d SET status = 'dead_lettered', final_at = k.dead_lettered_at, attempts = k.attempts,
                    first_attempt_at = k.first_attempt_at, detail = k.detail, replays = d.replays - 1,
                    replayed_at = before.replayed_at, replay_of = before.replay_of, updated_at = now()
                FROM kept k
                LEFT JOIN LATERAL (
                    SELECT p.replayed_at, p.replay_of FROM delivery_replays p
                    WHERE p.notification_id = k.notification_id AND p.token = k.token AND p.created_at = k.created_at
                      AND p.replayed_at < k.replayed_at
                    ORDER BY p.replayed_at DESC LIMIT 1
                ) before ON true
                WHERE d.notification_id = k.notification_id AND d.token = k.token AND d.created_at = k.created_at
                """, [.text(origin)])
            try await tx.query("DELETE FROM dlq_replays WHERE dlq_topic = $1 AND dlq_partition = $2 AND dlq_offset = $3",
                               [.text(message.topic), .int(Int64(message.partition)), .int(message.offset)])
        }
    }
}

extension DeadLetterReplay.Filter {
    /// Whether a dead letter with this reason and notification id is chosen
    /// (`again` aside): the reason compared without regard to case.
    func chooses(reason: String, notificationID: UUID?) -> Bool {
        if let wanted = reasonContains, !wanted.isEmpty, reason.range(of: wanted, options: .caseInsensitive) == nil { return false }
        if let wanted = self.notificationID, notificationID != wanted { return false }
        return true
    }
}

extension DeadLetterReplay {
    /// A replay that cannot go on.
    struct ReplayError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
