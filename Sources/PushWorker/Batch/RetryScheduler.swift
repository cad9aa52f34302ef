import Foundation
import PushCore

/// Decides what becomes of a part's deliveries that were not final: a retry
/// tier (by the retry policy and any Retry-After) for a failed attempt, the
/// lane's parked topic (keyed by app and provider, no attempt spent) for a
/// send the provider could not take, the dead-letter topic once attempts or
/// the hold are exhausted, or `expired`.
struct RetryScheduler: Sendable {
    let topics: TopicNames
    let retryPolicy: RetryPolicy

    /// Retries and parks what the part's sends left to do.
    func schedule(_ outcome: inout BatchOutcome) {
        endCancelled(&outcome)
        scheduleRetries(&outcome)
        park(&outcome)
    }

    /// Ends `cancelled` the deliveries that would be retried or parked but
    /// whose campaign was cancelled since their part was decided: no retry
    /// or parked copy is made of them.
    private func endCancelled(_ outcome: inout BatchOutcome) {
        guard outcome.retryNeeds.contains(where: { $0.item.stoppedBecause != nil })
            || outcome.held.contains(where: { $0.item.stoppedBecause != nil }) else { return }
        let now = Date()
        var needs: [RetryNeed] = [], held: [HeldDelivery] = []
        for need in outcome.retryNeeds {
            guard let stopped = need.item.stoppedBecause else { needs.append(need); continue }
            outcome.deliveries.append(need.item.cancelledRecord(
                stopped, at: now, attempts: need.attempts, providerStatus: need.providerStatus,
                firstAttemptAt: need.firstAttemptAt, lastAttemptAt: need.lastAttemptAt))
        }
        for delivery in outcome.held {
            guard let stopped = delivery.item.stoppedBecause else { held.append(delivery); continue }
            outcome.deliveries.append(delivery.item.cancelledRecord(stopped, at: now))
        }
        outcome.retryNeeds = needs
        outcome.held = held
    }

    /// Turns the part's retry needs into one retry (or dead-letter) message
    /// per consumed message, carrying only the recipients that failed, and the
    /// matching ledger rows (`retrying`, `dead_lettered` or `expired`).
    private func scheduleRetries(_ outcome: inout BatchOutcome) {
        guard !outcome.retryNeeds.isEmpty else { return }
        let now = Date()
        // Per consumed message, not per notification id: two messages of one notification
        // in a batch (one from a retry tier at attempt 3, one from intake at attempt 1)
        // carry their own attempt number, first failure and origin, and a retry message
        // takes them from the message its recipients came from.
        let groups = Self.grouped(outcome.retryNeeds) { ObjectIdentifier($0.item.source) }
        outcome.retryNeeds = []
        for needs in groups {
            guard let first = needs.first else { continue }
            let retryAfter = needs.compactMap(\.retryAfter).max()
            let attempt = first.item.headers.attempt
            let decision = retryPolicy.decide(
                attempt: attempt, retryAfter: retryAfter,
                expiresAt: first.item.notification.expiresAt, now: now, jitter: Double.random(in: 0..<1))
            var headers = first.item.headers
            headers.firstFailureAt = headers.firstFailureAt ?? now
            let status: DeliveryStatus
            var destination: (topic: String, label: String)?
            switch decision {
            case .retry(let tier, let delay, let nextAttempt):
                status = .retrying
                headers.attempt = nextAttempt
                headers.dueAt = now.addingTimeInterval(delay.seconds)
                destination = (topics.topics(of: first.item.source.arrival.lane).retryTopic(for: tier), tier.name)
            case .exhausted:
                status = .deadLettered
                destination = (topics.deadLetter, "exhausted")
            case .expired:
                status = .expired
            }
            if let destination {
                // Only the failed recipients go again, in messages intake takes again.
                for chunk in Self.chunks(needs.map(\.item), of: first.item.notification) {
                    var chunkHeaders = headers
                    chunkHeaders.lastError = Self.reasonSummary(needs[chunk.range].map(\.reason))
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

    /// Parks the part's held deliveries: per consumed message and held party,
    /// the notification with only those recipients, on the lane's parked
    /// topic, keyed by the party (its parked messages share a partition, in
    /// order), keeping the message's attempt number (nothing was sent) and
    /// when it was first parked. Their rows are `parked`; a delivery held
    /// past its limit is dead-lettered, one that would expire first is
    /// `expired`.
    private func park(_ outcome: inout BatchOutcome) {
        guard !outcome.held.isEmpty else { return }
        let now = Date()
        struct GroupKey: Hashable { var source: ObjectIdentifier; var party: HeldParty }
        let groups = Self.grouped(outcome.held) { GroupKey(source: ObjectIdentifier($0.item.source), party: $0.party) }
        outcome.held = []
        for held in groups {
            guard let first = held.first else { continue }
            var headers = first.item.headers
            let since = headers.heldSince ?? now
            headers.held = first.party
            headers.heldSince = since
            headers.parkCount += 1
            let lastError = Self.reasonSummary(held.map(\.reason))
            headers.lastError = lastError
            let status: DeliveryStatus
            let detail: String?
            var destination: (topic: String, key: [UInt8]?, label: String)?
            switch retryPolicy.decideHeld(heldSince: since, credential: held.contains(where: \.credential),
                                          retryAfter: held.compactMap(\.retryAfter).max(),
                                          expiresAt: first.item.notification.expiresAt, now: now) {
            case .park(let due):
                status = .parked
                headers.dueAt = due
                detail = "parked: \(first.party.provider.rawValue) could not take it; looked at again from \(Timestamps.format(due))"
                destination = (topics.topics(of: first.item.source.arrival.lane).parked, first.party.kafkaKey, "parked")
            case .exhausted(let limit):
                status = .deadLettered
                headers.reason = Self.heldTooLong(limit, lastError)
                detail = headers.reason
                destination = (topics.deadLetter, first.item.sourceKey, "held_too_long")
            case .expired:
                status = .expired
                detail = "expired while parked"
            }
            if let destination {
                for chunk in Self.chunks(held.map(\.item), of: first.item.notification) {
                    outcome.outgoing.append(OutgoingMessage(
                        topic: destination.topic, key: destination.key, value: chunk.value, headers: headers.kafkaHeaders,
                        label: destination.label, origin: headers.origin, notificationID: first.item.notification.id))
                }
            }
            for delivery in held {
                outcome.deliveries.append(delivery.item.record(status: status, reason: delivery.reason, detail: detail, at: now))
            }
        }
    }

    /// `elements` grouped by `key`, groups in the order their first element came.
    private static func grouped<T, K: Hashable>(_ elements: [T], by key: (T) -> K) -> [[T]] {
        var index: [K: Int] = [:]
        var groups: [[T]] = []
        for element in elements {
            let k = key(element)
            if let i = index[k] { groups[i].append(element) } else {
                index[k] = groups.count
                groups.append([element])
            }
        }
        return groups
    }

    /// The recipients of one consumed message as the messages that carry them
    /// again (a retry, a parked or a dead-letter message): the notification
    /// with only those recipients (user ids come back resolved to devices, FCM
    /// targets as targets), in as many messages as intake's limits need, each
    /// with the range of `items` it carries. A user id can resolve to any
    /// number of devices, and to longer ones than it was, so one message could
    /// otherwise hold more than `maxRecipients` recipients or `maxMessageBytes`
    /// bytes, and be refused when it is read again: its rows would never end.
    /// At most `maxRecipients` each, halved until a message fits (one
    /// recipient always goes alone, fitting or not: intake then says why).
    static func chunks(_ items: [WorkItem], of source: PushNotification) -> [(range: Range<Int>, value: [UInt8])] {
        var messages: [(range: Range<Int>, value: [UInt8])] = []
        func emit(_ range: Range<Int>) {
            let slice = items[range]
            var notification = source
            notification.recipients = slice.filter { $0.fcmTarget == nil }.map(\.recipient)
            notification.userRecipients = []
            notification.fcmTargets = slice.compactMap(\.fcmTarget)
            let value = notification.intakeJSON().encoded()
            if value.count > IntakeLimits.maxMessageBytes, range.count > 1 {
                let middle = range.lowerBound + range.count / 2
                emit(range.lowerBound..<middle)
                emit(middle..<range.upperBound)
            } else {
                messages.append((range, value))
            }
        }
        for start in stride(from: 0, to: items.count, by: IntakeLimits.maxRecipients) {
            emit(start..<min(start + IntakeLimits.maxRecipients, items.count))
        }
        return messages
    }

    /// `held longer than <limit>: <reasons>`.
    static func heldTooLong(_ limit: Duration, _ reasons: String) -> String {
        "held longer than \(Int(exactly: limit.components.seconds) ?? 0) s without its provider taking it: \(reasons)"
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
