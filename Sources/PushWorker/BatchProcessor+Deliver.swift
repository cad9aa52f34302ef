import Foundation
import PushCore
import PushHTTP

extension BatchProcessor {
    /// Sends one request and returns the delivery's outcome with one attempt
    /// record per try. A transport failure that got no HTTP status is re-sent
    /// at once (the provider never saw it); a transient provider answer
    /// becomes a retry need for the delayed-retry topics; a failure after a
    /// status arrived is never re-sent.
    func deliver(_ item: WorkItem, _ request: ProviderRequest, _ clients: ProviderRouter.AppClients) async -> BatchOutcome {
        var outcome = BatchOutcome()
        var firstAttemptAt: Date?
        for attempt in 1...maxInlineAttempts {
            let started = Date()
            firstAttemptAt = firstAttemptAt ?? started
            let clock = ContinuousClock.now
            let result: Result<ProviderResponse?, any Error>
            do { result = .success(try await clients.send(request)) } catch { result = .failure(error) }
            let latency = (ContinuousClock.now - clock).seconds * 1000
            func attemptRecord(_ label: String, _ status: Int?, _ reason: String?) -> AttemptRecord {
                AttemptRecord(key: item.key, attempt: item.headers.attempt, attemptedAt: started, outcome: label,
                              provider: request.provider, providerStatus: status, providerReason: reason,
                              latencyMilliseconds: latency)
            }
            switch result {
            case .failure(let error):
                let http = error as? HTTPError
                let reason = http.map { "Transport(\($0.curlCode))" } ?? "ClientError"
                outcome.attempts.append(attemptRecord("transport_error", nil, reason))
                logger.warning("provider send failed", metadata: [
                    "push.notification_id": "\(item.notification.id.uuidString.lowercased())",
                    "push.provider": "\(request.provider.rawValue)", "push.attempt": "\(item.headers.attempt).\(attempt)",
                    "error": "\(error)",
                ])
                if let http, http.statusReceived {
                    // A status arrived before the failure: the provider may have acted on it, so
                    // it is not sent again; it goes to the dead-letter topic for a person to judge.
                    var headers = item.headers
                    headers.reason = "response lost after the provider answered: \(error)"
                    var single = item.notification
                    single.recipients = [item.recipient]
                    single.userRecipients = []
                    single.fcmTargets = []
                    outcome.outgoing.append(OutgoingMessage(topic: topics.deadLetter, key: item.sourceKey,
                                                            value: single.intakeJSON().encoded(), headers: headers.kafkaHeaders))
                    outcome.deliveries.append(record(item, status: .deadLettered, reason: "ResponseLost", detail: "\(error)",
                                                     at: Date(), attempts: attempt, firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                    return outcome
                }
                if attempt == maxInlineAttempts {
                    outcome.retryNeeds.append(RetryNeed(item: item, reason: reason, providerStatus: nil, retryAfter: nil,
                                                        attempts: attempt, firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                    return outcome
                }
                try? await Task.sleep(for: .milliseconds(20 << (attempt - 1)))
            case .success(nil):
                outcome.deliveries.append(record(item, status: .rejected, reason: "PlatformNotConfigured", detail: nil, at: Date()))
                return outcome
            case .success(let response?):
                let classified = ResponseClassifier.classify(request.provider, response)
                let now = Date()
                outcome.attempts.append(attemptRecord(label(classified), response.status, classified.reason))
                switch classified {
                case .accepted(let messageID):
                    outcome.deliveries.append(DeliveryRecord(
                        key: item.key, app: item.notification.app, platform: item.recipient.platform, status: .accepted,
                        attempts: attempt, providerStatus: response.status, providerReason: nil, providerMessageID: messageID,
                        detail: nil, enqueuedAt: item.enqueuedAt, firstAttemptAt: firstAttemptAt, lastAttemptAt: started,
                        acceptedAt: now, finalAt: now))
                case .invalidToken(let reason, let since):
                    outcome.invalidations.append(TokenInvalidation(
                        app: item.notification.app, platform: item.recipient.platform, token: item.recipient.token,
                        since: since ?? now, reason: reason.rawValue))
                    outcome.deliveries.append(record(item, status: .invalidToken, reason: reason.rawValue, detail: nil, at: now,
                                                     attempts: attempt, providerStatus: response.status,
                                                     firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                case .rejected(let reason):
                    outcome.deliveries.append(record(item, status: .rejected, reason: reason.rawValue, detail: nil, at: now,
                                                     attempts: attempt, providerStatus: response.status,
                                                     firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                case .transient(let reason, let retryAfter):
                    outcome.retryNeeds.append(RetryNeed(item: item, reason: reason.rawValue, providerStatus: response.status,
                                                        retryAfter: retryAfter, attempts: attempt,
                                                        firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                case .authFailure(let reason), .unknown(_, let reason):
                    outcome.retryNeeds.append(RetryNeed(item: item, reason: reason.rawValue, providerStatus: response.status,
                                                        retryAfter: nil, attempts: attempt,
                                                        firstAttemptAt: firstAttemptAt, lastAttemptAt: started))
                }
                return outcome
            }
        }
        return outcome
    }

    private func label(_ outcome: ProviderOutcome) -> String {
        switch outcome {
        case .accepted: "accepted"
        case .invalidToken: "invalid_token"
        case .rejected: "rejected"
        case .authFailure: "auth_failure"
        case .transient: "transient"
        case .unknown: "unknown"
        }
    }
}
