import Foundation
import PushCore
import PushProviders

/// One recipient of one notification, ready to go. What all recipients of
/// one message share (the notification, its retry headers, key and enqueue
/// time) sits in one `Source`, so the item copies made between decode,
/// send and the records retain one reference instead of every field of a
/// `PushNotification`.
struct WorkItem: Sendable {
    /// The message an item came from, shared by all its recipients.
    final class Source: Sendable {
        let notification: PushNotification
        let enqueuedAt: Date?
        /// Retry state carried by the message this came from.
        let headers: RetryHeaders
        /// The message's Kafka key, which its retries and dead letters keep; nil
        /// when it had none or one over `maxSourceKeyBytes`.
        let sourceKey: [UInt8]?
        /// Where the message was consumed from: its lane, retry tier or parked topic.
        let arrival: DecodedMessage.Arrival
        /// The gate of the notification's campaign (`CampaignStops`), closed
        /// while it is cancelled; nil without a campaign.
        let gate: SendGate?
        /// The retry tier the message came from; nil from any other topic.
        var tier: String? { arrival.tier }

        init(notification: PushNotification, enqueuedAt: Date?, headers: RetryHeaders, sourceKey: [UInt8]?,
             arrival: DecodedMessage.Arrival = .init(), gate: SendGate? = nil) {
            self.arrival = arrival
            self.gate = gate
            self.notification = notification
            self.enqueuedAt = enqueuedAt
            self.headers = headers
            // A producer keys by recipient (a token or endpoint, at most 2,048 bytes). A key
            // near the producer's message.max.bytes would make every retry of the message too
            // big to produce, and its deliveries dead letters on their first transient failure.
            self.sourceKey = sourceKey.flatMap { $0.count <= Self.maxSourceKeyBytes ? $0 : nil }
        }

        /// The longest key a retry or dead letter keeps (a recipient is at most 2,048 bytes).
        static let maxSourceKeyBytes = 4_096
    }

    let source: Source
    /// The device, or for an FCM topic/condition a synthetic key (`topic:<name>`,
    /// `condition:<expression>`) on `android`.
    var recipient: Recipient
    /// Set for an FCM topic or condition target.
    var fcmTarget: FCMTarget? = nil
    var key: DeliveryKey
    /// The APNs environment the device registered in (`devices.environment`),
    /// nil for production or when the registry does not know the token.
    var environment: APNsEnvironment? = nil
    /// A device token named directly in the notification (not found through
    /// a user id, not an FCM topic or condition): checked against the registry.
    var direct = false
    /// The registry has this token as invalid (`devices.invalidated_at`).
    var knownInvalid = false

    // Borrowed, not returned: a getter copied the whole notification (a
    // memcpy and a retain and release of each of its fields) on every
    // `item.notification.app` of the batch's and the sends' checks.
    var notification: PushNotification { _read { yield source.notification } }
    var enqueuedAt: Date? { source.enqueuedAt }
    var headers: RetryHeaders { _read { yield source.headers } }
    var sourceKey: [UInt8]? { source.sourceKey }

    init(source: Source, recipient: Recipient, fcmTarget: FCMTarget? = nil, key: DeliveryKey) {
        self.source = source
        self.recipient = recipient
        self.fcmTarget = fcmTarget
        self.key = key
    }

    /// The ledger key of an FCM topic or condition target.
    static func syntheticToken(_ target: FCMTarget) -> String {
        switch target {
        case .topic(let name): "topic:" + name
        case .condition(let condition): "condition:" + condition
        }
    }

    /// Why this delivery's campaign stops it, nil while it may be sent.
    var stoppedBecause: String? { source.gate?.closedReason }

    /// This delivery's `cancelled` row: its campaign was cancelled before it was
    /// sent (again). Attempts already made in this part are counted on it.
    func cancelledRecord(_ detail: String, at now: Date, attempts: Int = 0, providerStatus: Int? = nil,
                         firstAttemptAt: Date? = nil, lastAttemptAt: Date? = nil) -> DeliveryRecord {
        record(status: .cancelled, reason: CampaignStops.cancelledReason, detail: detail, at: now, attempts: attempts,
               providerStatus: providerStatus, firstAttemptAt: firstAttemptAt, lastAttemptAt: lastAttemptAt)
    }

    /// This delivery's ledger row with `status` (final ones get `finalAt`).
    func record(status: DeliveryStatus, reason: String?, detail: String?, at now: Date, attempts: Int = 0,
                providerStatus: Int? = nil, firstAttemptAt: Date? = nil, lastAttemptAt: Date? = nil) -> DeliveryRecord {
        DeliveryRecord(
            key: key, app: notification.app, platform: recipient.platform, status: status,
            attempts: attempts, providerStatus: providerStatus, providerReason: reason, providerMessageID: nil, detail: detail,
            enqueuedAt: enqueuedAt, firstAttemptAt: firstAttemptAt, lastAttemptAt: lastAttemptAt,
            finalAt: status.isFinal ? now : nil, campaign: notification.campaign)
    }
}
