import Foundation
import PushCore

/// Decides what becomes of a part's deliveries that need another attempt:
/// a retry tier (by the retry policy and any Retry-After), the dead-letter
/// topic once attempts are exhausted, or `expired`.
struct RetryScheduler: Sendable {
    let topics: TopicNames
    let retryPolicy: RetryPolicy

    /// Turns the part's retry needs into one retry (or dead-letter) message
    /// per consumed message, carrying only the recipients that failed, and the
    /// matching ledger rows (`retrying`, `dead_lettered` or `expired`).
    func schedule(_ outcome: inout BatchOutcome) {
        guard !outcome.retryNeeds.isEmpty else { return }
        let now = Date()
        // Per consumed message, not per notification id: two messages of one notification
        // in a batch (one from a retry tier at attempt 3, one whose recipients were held
        // back at attempt 1) carry their own attempt number, first failure and origin,
        // and a retry message takes them from the message its recipients came from.
        // Recipients never sent (held back by the client) go in a message of their own
        // that keeps its attempt number: they cannot exhaust attempts unsent.
        struct GroupKey: Hashable { var source: ObjectIdentifier; var notSent: Bool }
        var groups: [GroupKey: [RetryNeed]] = [:]
        var order: [GroupKey] = []
        for need in outcome.retryNeeds {
            let key = GroupKey(source: ObjectIdentifier(need.item.source), notSent: need.notSent)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(need)
        }
        outcome.retryNeeds = []
        for key in order {
            guard let needs = groups[key], let first = needs.first else { continue }
            let retryAfter = needs.compactMap(\.retryAfter).max()
            let attempt = first.item.headers.attempt
            var policy = retryPolicy
            if key.notSent { policy.maxAttempts = Int.max }
            var decision = policy.decide(
                attempt: attempt, retryAfter: retryAfter,
                expiresAt: first.item.notification.expiresAt, now: now, jitter: Double.random(in: 0..<1))
            if key.notSent, case .retry(let tier, let delay, _) = decision { decision = .retry(tier: tier, delay: delay, attempt: attempt) }
            var headers = first.item.headers
            headers.firstFailureAt = headers.firstFailureAt ?? now
            let status: DeliveryStatus
            var destination: (topic: String, label: String)?
            switch decision {
            case .retry(let tier, let delay, let nextAttempt):
                status = .retrying
                headers.attempt = nextAttempt
                headers.dueAt = now.addingTimeInterval(delay.seconds)
                destination = (topics.retryTopic(for: tier), tier.name)
            case .exhausted:
                status = .deadLettered
                destination = (topics.deadLetter, "exhausted")
            case .expired:
                status = .expired
            }
            if let destination {
                // Only the failed recipients go again, in messages intake takes again.
                for chunk in Self.retryMessages(needs, of: first.item.notification) {
                    var chunkHeaders = headers
                    chunkHeaders.lastError = Self.reasonSummary(chunk.needs.map(\.reason))
                    if status == .deadLettered { chunkHeaders.reason = Self.exhausted(attempt: attempt, chunkHeaders.lastError ?? "") }
                    outcome.outgoing.append(OutgoingMessage(
                        topic: destination.topic, key: first.item.sourceKey, value: chunk.value, headers: chunkHeaders.kafkaHeaders,
                        label: destination.label, origin: chunkHeaders.origin, notificationID: first.item.notification.id))
                }
            }
            for need in needs {
                outcome.deliveries.append(need.item.record(
                    status: status, reason: need.reason,
                    // A dead letter's reason is in the ledger too, with the row's own failure (the
                    // message's pushfleet-reason header sums up all of them: a row's detail must not
                    // hold every recipient's reason, which made 1,000 recipients' rows a million).
                    detail: status == .retrying ? "retry \(headers.attempt) due \(Timestamps.format(headers.dueAt ?? now))"
                        : status == .deadLettered ? Self.exhausted(attempt: attempt, need.reason) : nil,
                    at: now, attempts: need.attempts, providerStatus: need.providerStatus,
                    firstAttemptAt: need.firstAttemptAt, lastAttemptAt: need.lastAttemptAt))
            }
        }
    }

    /// The failed recipients of one consumed message as the retry (or dead-letter)
    /// messages that carry them: the notification with only those recipients (user
    /// ids come back resolved to devices, FCM targets as targets), in as many
    /// messages as intake's limits need. A user id can resolve to any number of
    /// devices, and to longer ones than it was, so one message could otherwise
    /// hold more than `maxRecipients` recipients or `maxMessageBytes` bytes, and
    /// be refused when its retry is read: its rows would stay `retrying`. At most
    /// `maxRecipients` each, halved until a message fits (one recipient always
    /// goes alone, fitting or not: intake then says why).
    static func retryMessages(_ needs: [RetryNeed], of source: PushNotification) -> [(needs: ArraySlice<RetryNeed>, value: [UInt8])] {
        var messages: [(needs: ArraySlice<RetryNeed>, value: [UInt8])] = []
        func emit(_ slice: ArraySlice<RetryNeed>) {
            var notification = source
            notification.recipients = slice.filter { $0.item.fcmTarget == nil }.map(\.item.recipient)
            notification.userRecipients = []
            notification.fcmTargets = slice.compactMap(\.item.fcmTarget)
            let value = notification.intakeJSON().encoded()
            if value.count > IntakeLimits.maxMessageBytes, slice.count > 1 {
                let middle = slice.startIndex + slice.count / 2
                emit(slice[..<middle])
                emit(slice[middle...])
            } else {
                messages.append((slice, value))
            }
        }
        for start in stride(from: needs.startIndex, to: needs.endIndex, by: IntakeLimits.maxRecipients) {
            emit(needs[start..<min(start + IntakeLimits.maxRecipients, needs.endIndex)])
        }
        return messages
    }

    /// `retries exhausted after attempt N: <reason>`.
    static func exhausted(attempt: Int, _ reason: String) -> String {
        "retries exhausted after attempt \(attempt): \(reason)"
    }

    /// The failures of one message's recipients for `pushfleet-last-error`:
    /// each distinct reason once, in the order first seen, with `×n` when it
    /// came more than once (`Transport(28) ×998,ServiceUnavailable ×2`), cut
    /// to the header's budget. Linear in the recipients, and bounded.
    static func reasonSummary(_ reasons: [String]) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for reason in reasons {
            if counts[reason] == nil { order.append(reason) }
            counts[reason, default: 0] += 1
        }
        var text = ""
        for reason in order {
            if text.utf8.count > RetryHeaders.maxLastErrorBytes { break }
            if !text.isEmpty { text += "," }
            let count = counts[reason] ?? 1
            text += count > 1 ? "\(reason) ×\(count)" : reason
        }
        return BoundedText.cut(text, maxBytes: RetryHeaders.maxLastErrorBytes)
    }
}
