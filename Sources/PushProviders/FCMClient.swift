import Foundation
import Logging
import PushCore
import PushHTTP

/// Where and as whom an `FCMClient` sends.
public struct FCMClientConfiguration: Sendable {
    /// Scheme + host (+ port), no trailing slash; default `https://fcm.googleapis.com`.
    public var baseURL: String
    /// The service account whose OAuth tokens authorise the sends.
    public var serviceAccount: FCMServiceAccount
    /// Where to POST the OAuth grant instead of the account's `token_uri`.
    public var tokenURIOverride: String?
    /// Rate limit (default 600,000 messages/min per project), circuit breaker, re-sends.
    public var policy: ProviderClientPolicy

    public init(
        baseURL: String = "https://fcm.googleapis.com", serviceAccount: FCMServiceAccount,
        tokenURIOverride: String? = nil, policy: ProviderClientPolicy = .fcmDefault
    ) {
        self.baseURL = baseURL
        self.serviceAccount = serviceAccount
        self.tokenURIOverride = tokenURIOverride
        self.policy = policy
    }
}

/// Sends translated FCM HTTP v1 requests with a service-account OAuth token,
/// behind a rate limiter and a circuit breaker (one client per project).
public final class FCMClient: Sendable {
    private let baseURL: String
    private let http: HTTP2Client
    private let logger: Logger
    let guardian: ProviderGuard
    /// The OAuth token provider (shared by every request of this client).
    public let tokens: FCMAccessTokenProvider

    /// - Throws: `ProviderError.invalidKey` if the account's key cannot be used,
    ///   `.invalidConfiguration` for a bad policy.
    public init(
        configuration: FCMClientConfiguration, http: HTTP2Client, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        let baseURL = configuration.baseURL.hasSuffix("/")
            ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        self.baseURL = baseURL
        self.http = http
        var logger = logger
        logger[metadataKey: "fcm.project_id"] = "\(configuration.serviceAccount.projectID)"
        self.logger = logger
        self.tokens = try FCMAccessTokenProvider(
            account: configuration.serviceAccount, http: http,
            tokenURIOverride: configuration.tokenURIOverride, now: now, logger: logger)
        self.guardian = try ProviderGuard(host: baseURL, policy: configuration.policy, logger: logger)
    }

    /// Counters for metrics (`tokenRefreshes` counts access tokens fetched).
    public func stats() -> ProviderClientStats {
        var stats = guardian.snapshot()
        stats.tokenRefreshes = tokens.successfulFetchCount
        return stats
    }

    /// False while the circuit breaker is open: the worker should pause intake
    /// for this app and provider instead of filling the retry topics.
    public var isAcceptingWork: Bool { guardian.isAcceptingWork }

    /// The circuit breaker's state now.
    public var circuitState: CircuitBreaker.State { guardian.snapshot().circuitState }

    /// The host the breaker guards (metrics label).
    public var host: String { guardian.host }

    /// Sends `baseURL + request.path` with `authorization: Bearer <token>` and
    /// a JSON content type, after a rate-limit slot. Re-sends at once what got
    /// no HTTP status (GOAWAY, reset); a 401 invalidates the token and is
    /// retried once; any other answer is returned as is.
    /// `priority`: its place while it waits for a stream slot of its host.
    /// - Throws: `HTTPError` for transport failures of the send,
    ///   `ProviderError` when no access token can be had (retriable while the
    ///   token endpoint is down, with `retryAfter`), the circuit is open or
    ///   the rate limit holds the request back; `.gateClosed` when `gate`
    ///   closed before the request could go.
    public func send(_ request: ProviderRequest, gate: SendGate? = nil,
                     priority: HTTPRequestPriority = .urgent) async throws -> ProviderResponse {
        // Every request in flight keeps this frame: logging and header
        // building stay out of line.
        try await guardian.admit()
        let token: String
        do {
            token = try await tokens.accessToken()
        } catch {
            guardian.release()
            throw error
        }
        try guardian.pass(gate)
        let response = try await post(request, token: token, gate: gate, priority: priority)
        guard response.status == 401 else { return response }
        tokenRejected(token)
        return try await post(request, token: try await tokens.accessToken(), gate: gate, priority: priority)
    }

    @inline(never)
    private func tokenRejected(_ token: String) {
        logger.info("fcm.access token rejected; fetching a new one", metadata: ["http.status": "401"])
        tokens.invalidate(token: token)
    }

    private func post(_ request: ProviderRequest, token: String, gate: SendGate?, priority: HTTPRequestPriority) async throws -> ProviderResponse {
        let response = try await guardian.execute(httpRequest(request, token: token), on: http, gate: gate, priority: priority)
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The request's headers minus any authorization and content type, plus
    /// ours, in one allocation (out of line: it keeps the async frame small).
    @inline(never)
    private func httpRequest(_ request: ProviderRequest, token: String) -> HTTPRequest {
        let headers = ProviderHeaders.replacing(
            in: request.headers, dropping: "authorization", "content-type",
            adding: (name: "authorization", value: "Bearer \(token)"), (name: "content-type", value: "application/json; charset=utf-8"))
        return HTTPRequest(method: "POST", url: baseURL + request.path, headers: headers, body: request.body)
    }
}
