import Foundation
import Logging
import PushCore
import PushHTTP

/// The rate limiter, circuit breaker and counters of one provider client
/// (one app × provider), shared by all its concurrent sends.
final class ProviderGuard: Sendable {
    struct State: Sendable {
        var limiter: TokenBucketLimiter
        var breaker: CircuitBreaker
        /// Parked sends let back while the circuit recovers.
        var releases = ProbeReleases()
        var stats = ProviderClientStats()
    }

    /// `scheme://host[:port]` the client sends to (the breaker's label).
    let host: String
    let policy: ProviderClientPolicy
    private let logger: Logger
    let state: Locked<State>

    init(host: String, policy: ProviderClientPolicy, logger: Logger) throws(ProviderError) {
        try policy.validate()
        self.host = host
        self.policy = policy
        self.logger = logger
        self.state = Locked(State(
            limiter: TokenBucketLimiter(configuration: policy.rateLimit),
            breaker: CircuitBreaker(configuration: policy.circuitBreaker)))
    }

    /// Waits for a rate-limit slot (sleeping, never blocking a thread) and for
    /// the circuit to let the request through.
    ///
    /// The decisions are synchronous and out of line; only a rate-limit wait
    /// suspends. Every request in flight keeps its task's async frames, so
    /// this frame stays small (a large one costs each waiting request a
    /// task-allocator slab of its own).
    /// - Throws: `ProviderError.circuitOpen` or `.rateLimited` (both retriable),
    ///   `CancellationError` if the task is cancelled while it waits.
    func admit() async throws {
        if let due = try acquireSlot() { try await Task.sleep(until: due, clock: .continuous) }
        try passCircuit()
    }

    /// Refuses at once while the circuit is open; otherwise takes a rate-limit
    /// slot and returns when it is due (`nil`: now).
    @inline(never)
    private func acquireSlot() throws(ProviderError) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let openFor = state.withLock { state -> Duration? in
            guard case .open(let until) = state.breaker.state, now < until else { return nil }
            state.stats.refusedByOpenCircuit += 1
            return until - now
        }
        if let openFor { throw ProviderError.circuitOpen(host: host, retryAfter: openFor) }
        let decision = state.withLock { $0.limiter.acquire(now: now) }
        guard case .waitUntil(let due) = decision else { return nil }
        if due - now > policy.maxRateLimitWait {
            state.withLock {
                $0.limiter.giveBack()
                $0.stats.heldBackByRateLimit += 1
            }
            throw ProviderError.rateLimited(host: host, retryAfter: due - now)
        }
        return due
    }

    /// Lets the request through unless the breaker refuses it now.
    @inline(never)
    private func passCircuit() throws(ProviderError) {
        let refused = state.withLock { state -> Duration?? in
            let now = ContinuousClock.now
            guard !state.breaker.allowRequest(now: now) else { return nil }
            state.stats.refusedByOpenCircuit += 1
            if case .open(let until) = state.breaker.state { return .some(until - now) }
            return .some(nil)
        }
        if let refused { throw ProviderError.circuitOpen(host: host, retryAfter: refused) }
    }

    /// Lets an admitted request go unless `gate` closed while it waited; a
    /// request the gate stops is not sent (its admission is given back).
    /// Called after the last wait before the request goes.
    func pass(_ gate: SendGate?) throws(ProviderError) {
        guard let reason = gate?.closedReason else { return }
        release()
        throw ProviderError.gateClosed(reason)
    }

    /// An admitted request will not be sent after all (auth failure before sending).
    func release() {
        let now = ContinuousClock.now
        state.withLock { _ = $0.breaker.record(.neutral, now: now) }
    }

    /// The provider answered `status`: a throttle status (429; Push Kit's 503
    /// too) feeds the limiter, any other 5xx the breaker.
    func noteResponse(status: Int, retryAfter: Duration?) {
        let now = ContinuousClock.now
        let throttled = policy.throttleStatuses.contains(status)
        let change = state.withLock { state -> CircuitBreaker.State? in
            if throttled {
                state.stats.rateLimited += 1
                state.limiter.rateLimited(now: now, retryAfter: retryAfter)
            }
            if (200..<300).contains(status) { state.stats.lastSuccessAt = Date() }
            return state.breaker.record(status >= 500 && !throttled ? .failure : .success, now: now)
        }
        if let change { log(change) }
    }

    /// Holds every send back for `duration` (token-update throttling).
    func pause(for duration: Duration) {
        let now = ContinuousClock.now
        state.withLock { $0.limiter.rateLimited(now: now, retryAfter: duration) }
    }

    /// A send ended without an answer (after any re-sends).
    func noteFailure(_ error: any Error) {
        let now = ContinuousClock.now
        let outcome = Self.breakerOutcome(of: error)
        let change = state.withLock { state -> CircuitBreaker.State? in
            if let http = error as? HTTPError, http.kind == .transfer, http.curlCode == 28 { state.stats.timedOut += 1 }
            return state.breaker.record(outcome, now: now)
        }
        if let change { log(change) }
    }

    func noteSent() { state.withLock { $0.stats.requestsSent += 1 } }
    /// This client re-sends after a try that failed with `curlCode` and no status.
    func noteResend(curlCode: Int32) {
        state.withLock { state in
            state.stats.resentWithoutStatus += 1
            switch ResendReason(curlCode: curlCode) {
            case .goaway: state.stats.resentAfterGoaway += 1
            case .reset: state.stats.resentAfterReset += 1
            case .noStatus: state.stats.resentNoStatus += 1
            }
        }
    }

    /// libcurl re-sent a request by itself within one try.
    func noteLibcurlResends(_ resends: HTTPResends) {
        state.withLock { state in
            state.stats.resentWithoutStatus += resends.total
            state.stats.resentByLibcurl += resends.total
            state.stats.resentAfterGoaway += resends.goaway
            state.stats.resentAfterReset += resends.reset
        }
    }
    func noteTokenRefresh() { state.withLock { $0.stats.tokenRefreshes += 1 } }

    /// The counters now.
    func snapshot() -> ProviderClientStats {
        state.withLock { state in
            var stats = state.stats
            stats.circuitState = state.breaker.state
            stats.circuitOpenings = state.breaker.timesOpened
            stats.currentRate = state.limiter.currentRate
            let recent = state.breaker.windowCounts(now: ContinuousClock.now)
            stats.recentRequests = recent.successes + recent.failures
            stats.recentFailures = recent.failures
            return stats
        }
    }

    /// False while the circuit is open and its cool-down has not passed.
    var isAcceptingWork: Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            if case .open(let until) = state.breaker.state { return now >= until }
            return true
        }
    }

    /// Connection failures and timeouts count against the host; anything else
    /// (bad certificate, setup error, cancellation, shutdown) says nothing about it.
    static func breakerOutcome(of error: any Error) -> CircuitBreaker.Outcome {
        guard let http = error as? HTTPError, http.kind == .transfer else { return .neutral }
        return connectionFailureCodes.contains(http.curlCode) ? .failure : .neutral
    }

    /// Couldn't resolve/connect, HTTP/2 error, timeout, TLS connect error,
    /// got nothing, send/receive error, HTTP/2 stream error.
    static let connectionFailureCodes: Set<Int32> = [6, 7, 16, 18, 28, 35, 52, 55, 56, 92]

    private func log(_ change: CircuitBreaker.State) {
        switch change {
        case .open: logger.warning("provider.circuit opened", metadata: ["provider.host": "\(host)"])
        case .halfOpen: logger.info("provider.circuit half-open", metadata: ["provider.host": "\(host)"])
        case .closed: logger.info("provider.circuit closed", metadata: ["provider.host": "\(host)"])
        }
    }
}

/// Why a request that got no HTTP status was sent again (the `reason` label
/// of `pushfleet_resent_without_status_total`).
enum ResendReason: Equatable {
    /// The server refused or dropped the stream unprocessed as its session
    /// ended: curl 16 (HTTP/2 session closed, e.g. GOAWAY with an error).
    case goaway
    /// The stream or the connection was reset: curl 92 (RST_STREAM), 18 (stream
    /// cut off when the connection ended), 55 / 56 (send / receive failed).
    case reset
    /// The connection closed with nothing received: curl 52.
    case noStatus

    init(curlCode: Int32) {
        switch curlCode {
        case 16: self = .goaway
        case 52: self = .noStatus
        default: self = .reset  // 18, 55, 56, 92
        }
    }
}
