import Foundation
import PushCore
import PushPostgres

/// `intake_rejections`: the rows of messages that never became a notification
/// (or a receipt), and of records PostgreSQL or Kafka refused. Written by the
/// outcome transaction and by the receipts consumer.
enum IntakeRejectionRows {
    /// A rejection's app is the producer's text, read before it was checked:
    /// kept to the 255 bytes an app may have, not the 200 KB a refused
    /// message may carry.
    static func rejectionApp(_ app: String?) -> String? {
        app.map { BoundedText.cut($0, maxBytes: IntakeLimits.maxAppLength).storableText }
    }

    static func insert(_ items: [IntakeRejection], on c: PostgresConnection) async throws {
        try await c.query(
            """
            INSERT INTO intake_rejections (notification_id, app, kind, reason, kafka_topic, kafka_partition, kafka_offset, field_path)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[])
            ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING
            """,
            [
                .uuidArray(items.map(\.notificationID)), .textArray(items.map { rejectionApp($0.app) }),
                .textArray(items.map(\.kind.storableText)), .textArray(items.map(\.reason.storableText)),
                .textArray(items.map(\.topic.storableText)),
                .intArray(items.map { Int64($0.partition) }), .intArray(items.map(\.offset)),
                .textArray(items.map { $0.fieldPath?.storableText }),
            ])
    }
}
