import Foundation
import PushCore
import PushKafka

/// When a consumed message may be sent, for the poll loop to hold it (and
/// pause its partition) until then: a retry at its tier's due time, a parked
/// message once its provider can take it again and no sooner than the time
/// it was parked until. Anything else at once.
///
/// Asked of a message only when the loop would send it on a nil answer: a
/// parked message found free is counted as let back by its provider client,
/// which lets only its probes back while its circuit recovers.
struct DueTimes: Sendable {
    let topics: TopicNames
    /// Asked, for a parked message, whether its app's provider can take it now.
    let router: ProviderRouter

    /// nil: now. A due time in a header is trusted only up to the longest
    /// wait the fleet itself writes from `now` (a tier's delay, the longest
    /// park), so a header from elsewhere cannot hold a partition for long.
    func due(of message: KafkaMessage, now: Date) -> Date? {
        guard topics.isParkedTopic(message.topic) else { return topics.dueTime(of: message, now: now) }
        let headers = RetryHeaders(message: message)
        if let parkedUntil = headers.dueAt.map({ min($0, now.addingTimeInterval(RetryPolicy.maxParkDelay.seconds)) }),
           parkedUntil > now {
            return parkedUntil
        }
        let clockNow = ContinuousClock.now
        return headers.held.flatMap { router.releaseParked($0, now: clockNow) }
            .map { now.addingTimeInterval(($0 - clockNow).seconds) }
            .flatMap { $0 > now ? $0 : nil }
    }
}
