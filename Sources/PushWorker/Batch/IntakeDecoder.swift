import Foundation
import PushCore
import PushKafka

extension BatchProcessor {
    /// The retry state a consumed message carries. `pushfleet-*` headers are
    /// trusted only on the retry topics the fleet itself writes; on a topic
    /// producers write they are ignored (a producer cannot skip attempts,
    /// fake a due time or an origin) and counted. A retry message without a
    /// readable attempt number is sent as attempt 1, and counted and logged:
    /// workers always write one, so it came from elsewhere (a producer with
    /// rights on the retry topics, a replay tool) and resets the attempt count.
    func trustedHeaders(of message: KafkaMessage) -> RetryHeaders {
        if topics.isRetryTopic(message.topic) {
            let attempt = RetryHeaders.readableAttempt(of: message)
            if attempt == nil {
                counters.withLock { $0.unreadableRetryAttempts += 1 }
                logger.warning("retry message without a readable attempt number; sent as attempt 1", metadata: [
                    "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)", "kafka.offset": "\(message.offset)",
                    "retry.attempt_header": "\(message.header(RetryHeaders.attemptKey).map { String(reflecting: String(decoding: $0.prefix(40), as: UTF8.self)) } ?? "absent")",
                ])
            }
            return RetryHeaders(message: message, attempt: attempt)
        }
        if message.headers.contains(where: { RetryHeaders.steeringKeys.contains($0.name) }) {
            counters.withLock { $0.untrustedHeaders += 1 }
            logger.debug("retry headers on a producer topic ignored", metadata: [
                "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)", "kafka.offset": "\(message.offset)",
            ])
        }
        return RetryHeaders()
    }

    /// The intake policy for a batch decoded now.
    func intakePolicy() -> IntakePolicy { intake.policy(now: Date()) }

    /// A notification from intake or from a retry topic. A retry's created_at
    /// was in the window when intake took it, and ages while it waits: one
    /// created just inside the window, or read after an outage, would be
    /// refused on its retry tier and leave its rows `retrying` for good.
    /// So on a retry topic a created_at older than the window is taken, and
    /// the notification expires where the window ends (its rows end `expired`,
    /// nothing is sent: FCM stores nothing longer either). Older than a year
    /// (past any retry topic's retention) or too far in the future is still
    /// refused.
    static func decode(_ bytes: [UInt8], policy: IntakePolicy, retry: Bool) -> Result<PushNotification, IntakeError> {
        let decoded = PushNotification.decode(bytes, policy: policy)
        guard retry, case .failure(let error) = decoded, error.reason == .createdAtOutOfWindow,
              error.issues.allSatisfy({ $0.code == .createdAtOutOfWindow }) else { return decoded }
        var aged = policy
        aged.maxAge = max(policy.maxAge, Self.maxRetryAge)
        guard case .success(var notification) = PushNotification.decode(bytes, policy: aged),
              notification.createdAt < policy.now.addingTimeInterval(-policy.maxAge) else { return decoded }
        let windowEnd = notification.createdAt.addingTimeInterval(policy.maxAge)
        notification.expiresAt = min(notification.expiresAt ?? windowEnd, windowEnd)
        return .success(notification)
    }

    /// How old a retry's created_at may be: a year.
    static let maxRetryAge: TimeInterval = 366 * 86_400

    /// The message's Kafka timestamp as the enqueue time, when it lies in the
    /// accepted window: a producer can set CreateTime to anything, and it
    /// must not reach `deliveries.enqueued_at` or a histogram unchecked.
    func enqueueTime(of message: KafkaMessage, _ policy: IntakePolicy) -> Date? {
        guard let t = message.timestamp else { return nil }
        let age = policy.now.timeIntervalSince(t)
        return age <= policy.maxAge && -age <= policy.maxFuture ? t : nil
    }

    /// A message that is not a notification (or device event): recorded with
    /// its named reason and field path, and dead-lettered with them.
    func reject(_ message: KafkaMessage, _ error: IntakeError, headers: RetryHeaders, into outcome: inout BatchOutcome) {
        let kind = error.reason.rawValue
        logger.warning("intake message rejected", metadata: [
            "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)",
            "kafka.offset": "\(message.offset)", "intake.reason": "\(kind)", "intake.field": "\(error.fieldPath)",
            "push.notification_id": "\(error.notificationID?.uuidString.lowercased() ?? "-")",
            "error": "\(error.detail)",
        ])
        outcome.rejections.append(IntakeRejection(
            notificationID: error.notificationID, app: error.app, kind: kind, reason: error.detail,
            topic: message.topic, partition: message.partition, offset: message.offset, fieldPath: error.fieldPath))
        var dlq = headers
        dlq.reason = "\(kind): \(error.detail)"
        outcome.outgoing.append(OutgoingMessage(
            topic: topics.deadLetter, key: message.key, value: message.value, headers: dlq.kafkaHeaders,
            label: kind, origin: MessageOrigin(message), notificationID: error.notificationID))
    }

    /// A single message whose processing PostgreSQL refused with a data
    /// error (found by bisecting its batch): rejected `processing_failed` and
    /// dead-lettered, so it cannot stop the partition. Nothing of it was sent:
    /// every query of a batch runs before its first send.
    func poisoned(_ message: KafkaMessage, _ error: any Error) -> BatchOutcome {
        var outcome = BatchOutcome()
        var headers = trustedHeaders(of: message)
        headers.setOrigin(from: message)
        let text = "\(error)"
        logger.error("message refused by PostgreSQL; dead-lettered", metadata: [
            "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)",
            "kafka.offset": "\(message.offset)", "error": "\(text)",
        ])
        outcome.rejections.append(IntakeRejection(
            notificationID: nil, app: nil, kind: PoisonStage.processing.rawValue, reason: text,
            topic: message.topic, partition: message.partition, offset: message.offset, fieldPath: nil))
        headers.reason = "\(PoisonStage.processing.rawValue): \(text)"
        outcome.outgoing.append(OutgoingMessage(
            topic: topics.deadLetter, key: message.key, value: message.value, headers: headers.kafkaHeaders,
            label: PoisonStage.processing.rawValue, origin: MessageOrigin(message)))
        return outcome
    }
}

/// Where a record was refused and isolated from its batch: the `kind` of
/// its `intake_rejections` row and the `stage` label of
/// `pushfleet_poison_records_total`.
enum PoisonStage: String, Sendable {
    /// A query about the message (devices, ledger) failed with a data error.
    case processing = "processing_failed"
    /// PostgreSQL refused one of the message's outcome rows.
    case write = "write_failed"
    /// Kafka refused the dead letter even with its body cut.
    case deadLetter = "dead_letter_failed"
}
