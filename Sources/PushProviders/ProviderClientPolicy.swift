import Foundation
import PushCore

/// How a provider client protects the provider and itself: rate limit,
/// circuit breaker, and how it treats requests that got no HTTP status.
public struct ProviderClientPolicy: Sendable, Equatable {
    /// The token bucket (per client, i.e. per app × provider).
    public var rateLimit: TokenBucketLimiter.Configuration
    /// The circuit breaker for the client's host.
    public var circuitBreaker: CircuitBreaker.Configuration
    /// The longest `send` sleeps for a rate-limit slot; beyond it `send`
    /// throws `ProviderError.rateLimited` (retriable, with the wait as `retryAfter`).
    public var maxRateLimitWait: Duration
    /// How often a request that got no HTTP status after GOAWAY, a reset or a
    /// refused stream is re-sent at once before the error is thrown.
    public var maxResendsWithoutStatus: Int
    /// Answers that mean "send slower", not "down": each halves the limiter's
    /// rate and pauses it for `Retry-After`, and none counts against the
    /// circuit breaker. 429 for every provider; Push Kit's flow control is a 503.
    public var throttleStatuses: Set<Int> = [429]

    /// APNs: no rate limit (a 429 still pauses), default breaker.
    public static let apnsDefault = ProviderClientPolicy(rateLimit: .apnsDefault)
    /// FCM: 600,000 messages per minute per project, default breaker.
    public static let fcmDefault = ProviderClientPolicy(rateLimit: .fcmDefault)

    public init(
        rateLimit: TokenBucketLimiter.Configuration, circuitBreaker: CircuitBreaker.Configuration = .init(),
        maxRateLimitWait: Duration = .seconds(5), maxResendsWithoutStatus: Int = 5
    ) {
        self.rateLimit = rateLimit
        self.circuitBreaker = circuitBreaker
        self.maxRateLimitWait = maxRateLimitWait
        self.maxResendsWithoutStatus = maxResendsWithoutStatus
    }

    /// Checks every value; the error names the key (under `prefix`).
    public func validate(prefix: String = "policy") throws(ProviderError) {
        if let problem = rateLimit.problem {
            throw .invalidConfiguration("\(prefix).rate_limit.\(problem.field)", problem.message)
        }
        if let problem = circuitBreaker.problem {
            throw .invalidConfiguration("\(prefix).circuit_breaker.\(problem.field)", problem.message)
        }
        if maxRateLimitWait < .zero { throw .invalidConfiguration("\(prefix).max_rate_limit_wait", "must be ≥ 0") }
        if maxResendsWithoutStatus < 0 {
            throw .invalidConfiguration("\(prefix).max_resends_without_status", "must be ≥ 0")
        }
    }
}

/// Counters of one provider client since it started, for metrics
/// (`pushfleet_resent_without_status_total`, `pushfleet_token_refreshes_total`,
/// `pushfleet_rate_limited_total`, `pushfleet_circuit_state`).
public struct ProviderClientStats: Sendable, Equatable {
    /// HTTP requests put on the wire (re-sends included).
    public var requestsSent = 0
    /// Requests re-sent because a try ended with no HTTP status, whoever re-sent
    /// them: this client, or libcurl by itself (`HTTPResponse.resends`). The sum
    /// of the three counts below.
    public var resentWithoutStatus = 0
    /// … after the provider refused the stream unprocessed while its connection
    /// lived on: above a GOAWAY's last-stream-id, REFUSED_STREAM, or the HTTP/2
    /// session ended by the server (curl 16); libcurl's own re-sends whose
    /// connection was not reset.
    public var resentAfterGoaway = 0
    /// … after the stream or its connection was reset: RST_STREAM (curl 92),
    /// a stream cut off (18), a send or receive failure on the connection (55,
    /// 56); libcurl's own re-sends whose connection was reset (TCP RST).
    public var resentAfterReset = 0
    /// … after the connection closed with nothing at all received (curl 52).
    public var resentNoStatus = 0
    /// Of all those, the re-sends libcurl made by itself.
    public var resentByLibcurl = 0
    /// Requests answered 2xx whose answer was then cut off (a reset after the
    /// status): returned as accepted, never re-sent.
    public var acceptedWithCutOffAnswer = 0
    /// Requests whose answer never came within the request timeout: status
    /// unknown, not re-sent by the client (see `HTTPError` code 28).
    public var timedOut = 0
    /// New provider tokens signed (APNs) or access tokens fetched (FCM).
    public var tokenRefreshes = 0
    /// 429 answers (rate limit or token-update throttling).
    public var rateLimited = 0
    /// Sends refused locally because the limiter would have made them wait
    /// longer than `maxRateLimitWait`.
    public var heldBackByRateLimit = 0
    /// Sends refused locally because the circuit was open.
    public var refusedByOpenCircuit = 0
    /// How often the circuit opened.
    public var circuitOpenings = 0
    /// The circuit now.
    public var circuitState: CircuitBreaker.State = .closed
    /// The limiter's current rate (requests per second), nil when unlimited.
    public var currentRate: Double?
    /// When the provider last answered a request with a 2xx.
    public var lastSuccessAt: Date?
    /// Answers and failures the circuit breaker counts in its window (10 s by
    /// default) now: what a health page shows as the client's error share.
    public var recentRequests = 0
    public var recentFailures = 0

    public init() {}
}

extension Duration {
    /// Seconds as a `Double` (for `Date` arithmetic).
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
