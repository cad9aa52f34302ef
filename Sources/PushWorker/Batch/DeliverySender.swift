import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders
import PushThreads

/// Sends a part's requests, at most `maxConcurrentSends` at a time, and
/// judges each answer: the delivery's final row, its attempt, a token the
/// provider says is dead, or a need for another attempt (decided after all
/// sends by `RetryScheduler`).
final class DeliverySender: Sendable {
    /// One delivery to send: the item, its request, and the app's clients.
    typealias Send = (item: WorkItem, request: ProviderRequest, clients: ProviderRouter.AppClients)

    let topics: TopicNames
    let maxConcurrentSends: Int
    let counters: Locked<WorkerCounters>
    let observer: any WorkerObserver
    let logger: Logger

    init(topics: TopicNames, maxConcurrentSends: Int, counters: Locked<WorkerCounters>, observer: any WorkerObserver, logger: Logger) {
        self.topics = topics
        self.maxConcurrentSends = maxConcurrentSends
        self.counters = counters
        self.observer = observer
        self.logger = logger
    }

    /// Sends everything with at most `maxConcurrentSends` requests outstanding,
    /// on the send executor: the answers resume their sends, and the sends'
    /// ends this part, without a hop through the global pool each.
    func send(_ sends: [Send]) async -> BatchOutcome {
        await withTaskExecutorPreference(SerialTaskExecutor.sends) { await sendAll(sends) }
    }

    private func sendAll(_ sends: [Send]) async -> BatchOutcome {
        await withTaskGroup(of: BatchOutcome.self) { group in
            var outcome = BatchOutcome()
            var next = 0
            func launch(_ index: Int) {
                let (item, request, clients) = sends[index]
                // Web Push seals each message (ECDH, HKDF, AES-GCM) before it goes:
                // CPU work for the whole pool, not for the send executor's one thread.
                group.addTask(spreadingToGlobalPool: request.provider == .webpush) {
                    await self.deliver(item, request, clients)
                }
            }
            while next < sends.count && next < maxConcurrentSends {
                launch(next)
                next += 1
            }
            while let one = await group.next() {
                outcome.merge(one)
                if next < sends.count {
                    launch(next)
                    next += 1
                }
            }
            return outcome
        }
    }

    /// Sends one request and returns the delivery's outcome with its attempt
    /// record. The provider client has already re-sent at once whatever got
    /// no HTTP status (GOAWAY, reset, refused stream; `worker.max_inline_attempts`
    /// tries in all), so the worker makes one call: a failure that still has no
    /// status, or a transient provider answer, becomes a retry need for the
    /// delayed-retry topics; a failure after a status arrived is never re-sent.
    ///
    /// A delivery whose campaign was cancelled since its part was decided is
    /// not sent: its gate is looked at here and, by the provider client,
    /// right before the request goes (after any wait for a rate-limit slot
    /// or a token), and it ends `cancelled`.
    func deliver(_ item: WorkItem, _ request: ProviderRequest, _ clients: ProviderRouter.AppClients) async -> BatchOutcome {
        var outcome = BatchOutcome()
        if let stopped = item.stoppedBecause {
            outcome.deliveries.append(item.cancelledRecord(stopped, at: Date()))
            return outcome
        }
        let started = Date()
        let clock = ContinuousClock.now
        let result: Result<ProviderResponse?, any Error>
        do {
            result = .success(try await clients.send(request, environment: item.environment, gate: item.source.gate,
                                                           lane: item.source.arrival.lane))
        } catch {
            result = .failure(error)
        }
        let elapsed = (ContinuousClock.now - clock).seconds
        let latency = elapsed * 1000
        if Self.isCancellation(result) || Task.isCancelled {
            // Shutdown, not a provider failure: no attempt is spent or recorded; the
            // batch is left unfinished and its offsets unstored (redelivered later).
            outcome.cancelled = true
            return outcome
        }
        observer.providerRoundTrip(provider: request.provider, seconds: elapsed)
        func attemptRecord(_ label: String, _ status: Int?, _ reason: String?) -> AttemptRecord {
            AttemptRecord(key: item.key, attempt: item.headers.attempt, attemptedAt: started, outcome: label,
                          provider: request.provider, providerStatus: status, providerReason: reason,
                          latencyMilliseconds: latency, tier: item.source.tier, campaign: item.notification.campaign)
        }
        switch result {
        case .failure(let error):
            if let stopped = error as? ProviderError, stopped.kind == .gateClosed {
                outcome.deliveries.append(item.cancelledRecord(stopped.message, at: Date()))
                return outcome
            }
            if let webPush = error as? WebPushError, let reason = Self.unsendableReason(webPush) {
                // Sealing refused the message before any request: keys no browser made (a point
                // off the curve), an endpoint outside the allowed push services, or a payload
                // that padding pushed past one record. Final, no attempt.
                outcome.deliveries.append(item.record(status: .rejected, reason: reason, detail: webPush.message, at: Date()))
                return outcome
            }
            let http = error as? HTTPError
            let providerError = error as? ProviderError
            let reason = http.map { "Transport(\($0.curlCode))" } ?? providerError.map(Self.reason) ?? "ClientError"
            // Never sent, so not an attempt and none of retry.max_attempts spent: held back by
            // the client (open circuit, rate limit, throttled tokens), or no credential to send
            // with (the OAuth token endpoint failed, a JWT could not be signed). It is parked for
            // its app and provider alone (no other party waits for it), at least retryAfter; a
            // missing credential is counted on its own.
            if let providerError, let heldReason = Self.notSentReason(providerError.kind, reason: reason) {
                if let kind = Self.credentialFailureKind(providerError.kind) {
                    counters.withLock {
                        $0.credentialFailures[.init(provider: request.provider, app: item.notification.app, kind: kind), default: 0] += 1
                    }
                    logger.warning("no credential for the send; not sent, parked", metadata: [
                        "push.notification_id": "\(item.notification.id.uuidString.lowercased())",
                        "push.provider": "\(request.provider.rawValue)", "push.app": "\(item.notification.app)",
                        "error": "\(providerError)",
                    ])
                }
                let host = request.provider == .webpush ? providerError.host : nil
                outcome.held.append(HeldDelivery(
                    item: item, reason: heldReason, retryAfter: providerError.retryAfter,
                    party: HeldParty(provider: request.provider, app: item.notification.app, host: host),
                    credential: Self.credentialFailureKind(providerError.kind) != nil))
                return outcome
            }
            outcome.attempts.append(attemptRecord("transport_error", nil, reason))
            logger.warning("provider send failed", metadata: [
                "push.notification_id": "\(item.notification.id.uuidString.lowercased())",
                "push.provider": "\(request.provider.rawValue)", "push.attempt": "\(item.headers.attempt)",
                "error": "\(error)",
            ])
            if let http, http.statusReceived {
                // A status arrived before the failure: the provider may have acted on it, so
                // it is not sent again; it goes to the dead-letter topic for a person to judge.
                var headers = item.headers
                headers.reason = "response lost after the provider answered: \(error)"
                var single = item.notification
                single.recipients = item.fcmTarget == nil ? [item.recipient] : []
                single.userRecipients = []
                single.fcmTargets = item.fcmTarget.map { [$0] } ?? []
                outcome.outgoing.append(OutgoingMessage(topic: topics.deadLetter, key: item.sourceKey,
                                                        value: single.intakeJSON().encoded(), headers: headers.kafkaHeaders,
                                                        label: "response_lost", origin: headers.origin,
                                                        notificationID: item.notification.id))
                outcome.deliveries.append(item.record(status: .deadLettered, reason: "ResponseLost", detail: "\(error)",
                                                 at: Date(), attempts: 1, firstAttemptAt: started, lastAttemptAt: started))
                return outcome
            }
            // No status even after the client's re-sends, a timeout (status unknown) or a
            // client error (credentials, keys): a later try on a retry tier.
            outcome.retryNeeds.append(RetryNeed(item: item, reason: reason, providerStatus: nil,
                                                retryAfter: providerError?.retryAfter,
                                                attempts: 1, firstAttemptAt: started, lastAttemptAt: started))
            return outcome
        case .success(nil):
            outcome.deliveries.append(item.record(status: .rejected, reason: "PlatformNotConfigured", detail: nil, at: Date()))
            return outcome
        case .success(let response?):
            let classified = ResponseClassifier.classify(request.provider, response)
            let now = Date()
            outcome.attempts.append(attemptRecord(label(classified), response.status, classified.reason))
            switch classified {
            case .accepted(let messageID):
                outcome.deliveries.append(DeliveryRecord(
                    key: item.key, app: item.notification.app, platform: item.recipient.platform, status: .accepted,
                    attempts: 1, providerStatus: response.status, providerReason: nil, providerMessageID: messageID,
                    detail: nil, enqueuedAt: item.enqueuedAt, firstAttemptAt: started, lastAttemptAt: started,
                    acceptedAt: now, finalAt: now, campaign: item.notification.campaign))
                // Two clocks end here: the producer's created_at, and the Kafka timestamp
                // of the intake message this send came from (a retry's or a parked
                // message's timestamp is not when the notification was enqueued).
                observer.createdToAccepted(provider: request.provider,
                                           seconds: max(0, now.timeIntervalSince(item.notification.createdAt)))
                if item.source.arrival.fromIntake, let enqueuedAt = item.enqueuedAt {
                    observer.enqueuedToAccepted(provider: request.provider, seconds: max(0, now.timeIntervalSince(enqueuedAt)))
                }
            case .invalidToken(let reason, let since):
                if item.fcmTarget == nil {
                    outcome.invalidations.append(TokenInvalidation(
                        app: item.notification.app, platform: item.recipient.platform, token: item.recipient.token,
                        since: since ?? now, reason: reason.rawValue, learnedAt: now))
                }
                outcome.deliveries.append(item.record(status: .invalidToken, reason: reason.rawValue, detail: nil, at: now,
                                                 attempts: 1, providerStatus: response.status,
                                                 firstAttemptAt: started, lastAttemptAt: started))
            case .rejected(let reason):
                outcome.deliveries.append(item.record(status: .rejected, reason: reason.rawValue, detail: nil, at: now,
                                                 attempts: 1, providerStatus: response.status,
                                                 firstAttemptAt: started, lastAttemptAt: started))
            case .transient(let reason, let retryAfter):
                outcome.retryNeeds.append(RetryNeed(item: item, reason: reason.rawValue, providerStatus: response.status,
                                                    retryAfter: retryAfter, attempts: 1,
                                                    firstAttemptAt: started, lastAttemptAt: started))
            case .authFailure(let reason), .unknown(_, let reason):
                outcome.retryNeeds.append(RetryNeed(item: item, reason: reason.rawValue, providerStatus: response.status,
                                                    retryAfter: nil, attempts: 1,
                                                    firstAttemptAt: started, lastAttemptAt: started))
            }
            return outcome
        }
    }

    /// The ledger reason of a request the provider client held back or could not make.
    static func reason(_ error: ProviderError) -> String {
        switch error.kind {
        case .circuitOpen: "CircuitOpen"
        case .rateLimited: "RateLimited"
        case .providerTokenThrottled: "TooManyProviderTokenUpdates"
        default: "ClientError(\(error.kind))"
        }
    }

    /// The ledger reason of a Web Push message that cannot be sealed for its
    /// subscription, nil for a failure a later try may not meet (OpenSSL).
    static func unsendableReason(_ error: WebPushError) -> String? {
        switch error.kind {
        case .invalidBase64URL, .invalidP256DH, .invalidAuthSecret: "InvalidSubscriptionKeys"
        case .invalidEndpoint: "InvalidEndpoint"
        case .endpointNotAllowed: "EndpointNotAllowed"
        case .plaintextTooLarge: "PayloadTooLarge"
        case .invalidTopic, .invalidTTL, .invalidParameter: "InvalidRequest"
        case .invalidSubject, .invalidVAPIDKey, .crypto, .decryptionFailed: nil
        }
    }

    /// The ledger reason of a send that never became a request, nil for a failure of one that did.
    static func notSentReason(_ kind: ProviderError.Kind, reason: String) -> String? {
        if [.circuitOpen, .rateLimited, .providerTokenThrottled].contains(kind) { return reason }
        return credentialFailureKind(kind).map { "CredentialUnavailable(\($0))" }
    }

    /// The `kind` label of a failure to obtain the send's credential, nil for
    /// any other error (those are the provider's or the transport's).
    static func credentialFailureKind(_ kind: ProviderError.Kind) -> String? {
        switch kind {
        case .tokenEndpoint: "token_endpoint"
        case .tokenEndpointTransport: "token_endpoint_unreachable"
        case .invalidTokenResponse: "invalid_token_response"
        case .signing: "signing"
        case .invalidKey: "invalid_key"
        case .invalidServiceAccount: "invalid_service_account"
        case .circuitOpen, .rateLimited, .providerTokenThrottled, .credentialsRejected, .invalidConfiguration, .gateClosed: nil
        }
    }

    /// The request was cancelled (shutdown), which says nothing about the provider.
    static func isCancellation(_ result: Result<ProviderResponse?, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        if error is CancellationError { return true }
        if let http = error as? HTTPError, http.kind == .cancelled { return true }
        return false
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
