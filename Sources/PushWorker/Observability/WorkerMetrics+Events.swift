import Foundation
import Metrics
import PushCore

extension WorkerMetrics {
    /// One delivery reached `status` (a final status, or `.retrying`).
    /// `reason` is the provider's reason code or the worker's (`Expired`,
    /// `UnknownApp`, `Transport(92)`); nil or empty for none.
    public func sent(provider: Provider, app: String, status: DeliveryStatus, reason: String?, count: Int = 1) {
        guard count > 0 else { return }
        counter(MetricNames.notificationsSent, [
            ("provider", provider.rawValue), label("app", app),
            ("status", status.sentLabel), label("reason", reason ?? ""),
        ]).increment(by: count)
    }

    /// One provider HTTP round trip (request submitted → response or failure).
    public func providerRoundTrip(provider: Provider, seconds: Double) {
        record(providerTimer(MetricNames.providerRequest, provider, cache: roundTripTimers), seconds: seconds)
    }

    /// Notification `created_at` → provider acceptance.
    public func createdToAccepted(provider: Provider, seconds: Double) {
        record(providerTimer(MetricNames.createdToAccepted, provider, cache: createdTimers), seconds: seconds)
    }

    /// The Kafka timestamp of the intake message a send came from → provider acceptance.
    public func enqueuedToAccepted(provider: Provider, seconds: Double) {
        record(providerTimer(MetricNames.enqueuedToAccepted, provider, cache: enqueuedTimers), seconds: seconds)
    }

    /// Notifications currently being delivered.
    public func setInFlight(_ count: Int) {
        inFlightCount.withLock { $0 = count }
        gauge(MetricNames.inFlight).record(count)
    }

    /// Adds `delta` (+1 when a send starts, -1 when it ends) to the in-flight
    /// gauge, for callers that do not keep the total themselves.
    public func addInFlight(_ delta: Int) {
        let gauge = gauge(MetricNames.inFlight)
        inFlightCount.withLock { count in
            count += delta
            gauge.record(count)
        }
    }

    /// A notification scheduled onto a delayed-retry tier (`5s`, `1m`, …).
    public func retried(tier: String, count: Int = 1) {
        guard count > 0 else { return }
        counter(MetricNames.retries, [label("tier", tier)]).increment(by: count)
    }

    /// A message produced to the dead-letter topic. Pass a short category
    /// (`exhausted`, `invalid`, `undecodable`, `response_lost`, …), not the
    /// free-text header: free text becomes `other`.
    public func deadLettered(reason: String, count: Int = 1) {
        guard count > 0 else { return }
        counter(MetricNames.deadLetters, [label("reason", reason)]).increment(by: count)
    }

    /// Deliveries not sent because the ledger (or the same batch) had them.
    public func suppressed(count: Int) {
        guard count > 0 else { return }
        counter(MetricNames.suppressedDuplicates).increment(by: count)
    }

    /// Messages on a producer topic whose retry headers were ignored.
    public func untrustedHeaders(count: Int) {
        guard count > 0 else { return }
        counter(MetricNames.untrustedHeaders).increment(by: count)
    }

    /// Retry-topic messages whose attempt number could not be read (sent as attempt 1).
    public func unreadableRetryAttempts(count: Int) {
        guard count > 0 else { return }
        counter(MetricNames.unreadableRetryAttempts).increment(by: count)
    }

    /// Records PostgreSQL or Kafka refused, isolated from their batch
    /// (`stage`: `processing_failed`, `write_failed`, `dead_letter_failed`).
    public func poisonRecords(stage: String, count: Int) {
        guard count > 0 else { return }
        counter(MetricNames.poisonRecords, [label("stage", stage)]).increment(by: count)
    }

    /// Sends held back because their credential could not be had (no request made).
    public func credentialFailures(provider: Provider, app: String, kind: String, count: Int) {
        guard count > 0 else { return }
        counter(MetricNames.credentialFailures, [("provider", provider.rawValue), label("app", app), label("kind", kind)])
            .increment(by: count)
    }

    /// One provider client's circuit breaker state: each app's client of each
    /// provider has its own breaker (Web Push one per push service), so
    /// clients sharing a host never hide each other's state.
    public func setCircuitState(provider: Provider, app: String, host: String, state: CircuitState) {
        gauge(MetricNames.circuitState, [("provider", provider.rawValue), label("app", app), label("host", host)])
            .record(state.rawValue)
    }

    /// A provider token (APNs JWT, FCM OAuth2 access token) was minted or refreshed.
    public func tokenRefreshed(provider: Provider, app: String) {
        counter(MetricNames.tokenRefreshes, [("provider", provider.rawValue), label("app", app)]).increment()
    }

    /// Requests re-sent, by the client or by libcurl itself, because a try
    /// ended before any HTTP status arrived. `reason`: `goaway` (the provider
    /// refused the stream unprocessed: above a GOAWAY's last-stream-id,
    /// REFUSED_STREAM, or its HTTP/2 session ended, curl 16), `reset` (RST_STREAM
    /// or a reset connection: curl 92, 18, 55, 56, or a TCP RST under libcurl's
    /// own re-send), `no_status` (the connection closed with nothing received,
    /// curl 52).
    public func resentWithoutStatus(provider: Provider, reason: String, count: Int = 1) {
        guard count > 0 else { return }
        counter(MetricNames.resentWithoutStatus, [("provider", provider.rawValue), ("reason", reason)])
            .increment(by: count)
    }

    /// The provider answered 429 / asked us to slow down.
    public func rateLimited(provider: Provider, app: String) {
        counter(MetricNames.rateLimited, [("provider", provider.rawValue), label("app", app)]).increment()
    }

    /// One PostgreSQL outcome transaction took `seconds`.
    public func batchCommitted(seconds: Double) {
        record(timer(MetricNames.batchCommit), seconds: seconds)
    }
}
