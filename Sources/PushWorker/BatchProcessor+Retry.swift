import Foundation
import PushCore

extension BatchProcessor {
    /// Turns the batch's retry needs into one retry (or dead-letter) message
    /// per notification, carrying only the recipients that failed, and the
    /// matching ledger rows (`retrying`, `dead_lettered` or `expired`).
    func scheduleRetries(_ outcome: inout BatchOutcome) {
        guard !outcome.retryNeeds.isEmpty else { return }
        let now = Date()
        var groups: [UUID: [RetryNeed]] = [:]
        var order: [UUID] = []
        for need in outcome.retryNeeds {
            if groups[need.item.notification.id] == nil { order.append(need.item.notification.id) }
            groups[need.item.notification.id, default: []].append(need)
        }
        outcome.retryNeeds = []
        for id in order {
            guard let needs = groups[id], let first = needs.first else { continue }
            let retryAfter = needs.compactMap(\.retryAfter).max()
            let decision = retryPolicy.decide(
                attempt: first.item.headers.attempt, retryAfter: retryAfter,
                expiresAt: first.item.notification.expiresAt, now: now, jitter: Double.random(in: 0..<1))
            var notification = first.item.notification
            notification.recipients = needs.map(\.item.recipient)
            // Only the failed device recipients go again; user ids and topic targets were handled the first time.
            notification.userRecipients = []
            notification.fcmTargets = []
            var headers = first.item.headers
            headers.firstFailureAt = headers.firstFailureAt ?? now
            headers.lastError = needs.map(\.reason).joined(separator: ",")
            let status: DeliveryStatus
            switch decision {
            case .retry(let tier, let delay, let nextAttempt):
                status = .retrying
                headers.attempt = nextAttempt
                headers.dueAt = now.addingTimeInterval(delay.seconds)
                outcome.outgoing.append(OutgoingMessage(
                    topic: topics.retryTopic(for: tier), key: first.item.sourceKey,
                    value: notification.intakeJSON().encoded(), headers: headers.kafkaHeaders))
            case .exhausted:
                status = .deadLettered
                headers.reason = "retries exhausted after attempt \(first.item.headers.attempt): \(headers.lastError ?? "")"
                outcome.outgoing.append(OutgoingMessage(
                    topic: topics.deadLetter, key: first.item.sourceKey,
                    value: notification.intakeJSON().encoded(), headers: headers.kafkaHeaders))
            case .expired:
                status = .expired
            }
            for need in needs {
                outcome.deliveries.append(record(
                    need.item, status: status, reason: need.reason,
                    detail: status == .retrying ? "retry \(headers.attempt) due \(Timestamps.format(headers.dueAt ?? now))" : nil,
                    at: now, attempts: need.attempts, providerStatus: need.providerStatus,
                    firstAttemptAt: need.firstAttemptAt, lastAttemptAt: need.lastAttemptAt))
            }
        }
    }
}
