import Foundation
import PushCore

/// What one part of a batch came to: the rows its outcome write makes, the
/// retry and dead-letter messages produced before it, and what the part's
/// steps pass on to the next (`retryNeeds`, `cancelled`).
struct BatchOutcome: Sendable {
    var deliveries: [DeliveryRecord] = []
    var attempts: [AttemptRecord] = []
    var invalidations: [TokenInvalidation] = []
    var rejections: [IntakeRejection] = []
    /// Device registry changes from the devices topic.
    var deviceUpdates: [DeviceEvent] = []
    /// The message each of `deviceUpdates` came from (same order).
    var deviceOrigins: [MessageOrigin] = []
    /// The message each notification of the batch came from, so a record
    /// PostgreSQL refuses can be rejected against it.
    var origins: [UUID: MessageOrigin] = [:]
    /// Notification ids `notification_ids` did not hold when the batch looked
    /// them up: they had no `deliveries` row then, so their rows are written
    /// with plain inserts (`OutcomeWriter.write` falls back to the upsert if
    /// another writer got there first).
    var idsNewToLedger: Set<UUID> = []
    /// Replayed deliveries not sent again because the ledger already had them final.
    var suppressed = 0
    /// Retry and dead-letter messages to produce before the offsets may be stored.
    var outgoing: [OutgoingMessage] = []
    /// A send was cancelled (shutdown): the batch must be left unfinished.
    var cancelled = false
    /// Recipients that need another attempt, decided on after all sends.
    var retryNeeds: [RetryNeed] = []

    mutating func merge(_ other: BatchOutcome) {
        deliveries += other.deliveries
        attempts += other.attempts
        invalidations += other.invalidations
        rejections += other.rejections
        deviceUpdates += other.deviceUpdates
        deviceOrigins += other.deviceOrigins
        origins.merge(other.origins) { first, _ in first }
        suppressed += other.suppressed
        idsNewToLedger.formUnion(other.idsNewToLedger)
        outgoing += other.outgoing
        retryNeeds += other.retryNeeds
        cancelled = cancelled || other.cancelled
    }
}

/// A recipient whose send failed in a way worth trying again later.
struct RetryNeed: Sendable {
    var item: WorkItem
    var reason: String
    var providerStatus: Int?
    var retryAfter: Duration?
    var attempts: Int
    var firstAttemptAt: Date?
    var lastAttemptAt: Date
    /// Never sent (the client held it back): the retry keeps its attempt number.
    var notSent = false
}
