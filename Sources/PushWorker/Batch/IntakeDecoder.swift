import Foundation
import PushCore
import Logging
import PushKafka

/// Decodes consumed messages: the retry state a message may carry (trusted
/// only on the retry topics), then a device event or a notification under
/// intake's rules, or the named reason it is neither. Total: any bytes end
/// as a `DecodedMessage`.
struct IntakeDecoder: Sendable {
    let topics: TopicNames
    /// The `created_at` window intake enforces.
    let intake: WorkerConfiguration.Intake
    let counters: Locked<WorkerCounters>
    let logger: Logger

    /// Decodes one message, once, whatever part of its batch handles it.
    func decode(_ message: KafkaMessage, policy: IntakePolicy) -> DecodedMessage {
        var headers = trustedHeaders(of: message)
        headers.setOrigin(from: message)
        if message.topic == topics.devices {
            switch DeviceEvent.decode(message.value) {
            case .failure(let error): return DecodedMessage(message: message, headers: headers, content: .rejected(error))
            case .success(let event): return DecodedMessage(message: message, headers: headers, content: .device(event))
            }
        }
        let tier = topics.retryTier(of: message.topic)?.name
        switch Self.decodeNotification(message.value, policy: policy, retry: tier != nil) {
        case .failure(let error): return DecodedMessage(message: message, headers: headers, content: .rejected(error))
        case .success(let notification):
            return DecodedMessage(message: message, headers: headers, content: .notification(notification, tier: tier))
        }
    }

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
    func policy() -> IntakePolicy { intake.policy(now: Date()) }

    /// A notification from intake or from a retry topic. A retry's created_at
    /// was in the window when intake took it, and ages while it waits: one
    /// created just inside the window, or read after an outage, would be
    /// refused on its retry tier and leave its rows `retrying` for good.
    /// So on a retry topic a created_at older than the window is taken, and
    /// the notification expires where the window ends (its rows end `expired`,
    /// nothing is sent: FCM stores nothing longer either). Older than a year
    /// (past any retry topic's retention) or too far in the future is still
    /// refused.
    static func decodeNotification(_ bytes: [UInt8], policy: IntakePolicy, retry: Bool) -> Result<PushNotification, IntakeError> {
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
}
