import Foundation
import PushCore
import PushKafka

/// The ledger key of one delivery: a notification to one device token.
struct DeliveryKey: Hashable, Sendable {
    var notificationID: UUID
    var token: String
    var createdAt: Date
}

/// The current state of one delivery, upserted into `deliveries`.
struct DeliveryRecord: Sendable {
    var key: DeliveryKey
    var app: String
    /// nil for a user id that resolved to no device (written as `none`).
    var platform: Platform?
    var status: DeliveryStatus
    /// Attempts made in this batch (added to the stored count).
    var attempts: Int
    var providerStatus: Int?
    var providerReason: String?
    var providerMessageID: String?
    var detail: String?
    var enqueuedAt: Date?
    var firstAttemptAt: Date?
    var lastAttemptAt: Date?
    var acceptedAt: Date?
    var finalAt: Date?
    /// The notification's campaign (`deliveries.campaign`), nil for none.
    var campaign: String? = nil
}

extension DeliveryRecord {
    /// The provider this delivery went (or would go) through.
    var provider: Provider? { platform?.provider }
}

/// One provider attempt: a `delivery_attempt_log` row, or kept on its delivery row (see `OutcomeWriter.foldFirstAttempts`).
struct AttemptRecord: Sendable {
    var key: DeliveryKey
    var attempt: Int
    var attemptedAt: Date
    var outcome: String
    var provider: Provider
    var providerStatus: Int?
    var providerReason: String?
    var latencyMilliseconds: Double
    /// The retry tier the message came from (`5s`, `1m`, …); nil from the intake topic.
    var tier: String? = nil
    /// The notification's campaign, nil for none.
    var campaign: String? = nil
}

/// A token the provider said is dead.
struct TokenInvalidation: Sendable {
    var app: String
    var platform: Platform
    var token: String
    /// When the provider says the token stopped being valid: the APNs 410
    /// `timestamp`, else the time of the answer (`provider_invalid_since`).
    var since: Date
    var reason: String
    /// When this worker learnt it: the time of the answer (`invalidated_at`,
    /// what the views count by).
    var learnedAt: Date
}

/// An intake message that never became a notification, or a record of one
/// that PostgreSQL or Kafka refused (`write_failed`, `dead_letter_failed`).
struct IntakeRejection: Sendable {
    var notificationID: UUID?
    var app: String?
    /// The named reason (`nul_character`, `too_large`, `write_failed`, ...).
    var kind: String
    var reason: String
    var topic: String
    var partition: Int32
    var offset: Int64
    /// JSON path of the offending field, `$` for the whole message.
    var fieldPath: String? = nil
}

/// Where a consumed message sat: what a rejection row and a dead letter name.
struct MessageOrigin: Sendable, Hashable {
    var topic: String
    var partition: Int32
    var offset: Int64

    init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    init(_ message: KafkaMessage) {
        self.init(topic: message.topic, partition: message.partition, offset: message.offset)
    }
}

extension String {
    /// The text with every U+0000 replaced by U+FFFD: PostgreSQL `text`
    /// cannot hold NUL, and a provider's reason or an error message is
    /// informational, so it is stored mended rather than refused.
    var storableText: String {
        guard utf8.contains(0) else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }
}
