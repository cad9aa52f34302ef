import Foundation
import PushCore
import PushKafka

/// When a consumed message may be sent, for the poll loop to hold it (and
/// pause its partition) until then: a retry at its tier's due time, a parked
/// message once its provider can take it again and no sooner than the time
/// it was parked until. Anything else at once.
struct DueTimes: Sendable {
    let topics: TopicNames
    /// Asked, for a parked message, when its app's provider can take a send again.
    let router: ProviderRouter

    /// nil: now. A due time in a header is trusted only up to the longest
    /// wait the fleet itself writes from `now` (a tier's delay, the longest
    /// park), so a header from elsewhere cannot hold a partition for long.
    func due(of message: KafkaMessage, now: Date) -> Date? {
        guard topics.isParkedTopic(message.topic) else { return topics.dueTime(of: message, now: now) }
        let headers = RetryHeaders(message: message)
        let parkedUntil = headers.dueAt.map { min($0, now.addingTimeInterval(RetryPolicy.maxParkDelay.seconds)) }
        let clockNow = ContinuousClock.now
        let providerFree = headers.held.flatMap { router.heldUntil($0, now: clockNow) }
            .map { now.addingTimeInterval(($0 - clockNow).seconds) }
        let due = [parkedUntil, providerFree].compactMap { $0 }.max()
        return due.flatMap { $0 > now ? $0 : nil }
    }
}
