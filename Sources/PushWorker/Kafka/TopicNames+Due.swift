import Foundation
import PushCore
import PushKafka

extension TopicNames {
    /// When a message consumed `now` may be sent: its `pushfleet-due-at` on a
    /// retry topic, never later than the tier's own delay from now (a due
    /// time beyond that was not written by a worker of this configuration and
    /// would hold the partition paused); nil elsewhere.
    func dueTime(of message: KafkaMessage, now: Date) -> Date? {
        guard let tier = retryTier(of: message.topic), let due = RetryHeaders(message: message).dueAt else { return nil }
        return min(due, now.addingTimeInterval(tier.delay.seconds))
    }
}
