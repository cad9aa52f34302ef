import Foundation
import Logging
import PushCore
import PushHTTP

/// Where and as whom an `HMSClient` sends.
public struct HMSClientConfiguration: Sendable {
    /// The app id: the path's `<appId>`, and the grant's `client_id` unless `clientID` is set.
    public var appID: String
    /// The OAuth 2.0 client id, where AppGallery Connect gives one apart from
    /// the app id (project-level credentials); nil uses the app id.
    public var clientID: String?
    /// The app secret (OAuth client secret).
    public var clientSecret: String
    /// Scheme + host (+ port), no trailing slash; default `https://push-api.cloud.huawei.com`.
    public var baseURL: String
    /// The OAuth token endpoint; default `https://oauth-login.cloud.huawei.com/oauth2/v3/token`.
    public var tokenURL: String
    /// Rate limit, circuit breaker, re-sends.
    public var policy: ProviderClientPolicy

    public init(
        appID: String, clientSecret: String, baseURL: String = "https://push-api.cloud.huawei.com",
        tokenURL: String = "https://oauth-login.cloud.huawei.com/oauth2/v3/token",
        policy: ProviderClientPolicy = .hmsDefault, clientID: String? = nil
    ) {
        self.appID = appID
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.baseURL = baseURL
        self.tokenURL = tokenURL
        self.policy = policy
    }
}

extension ProviderClientPolicy {
    /// Push Kit: no client-side rate limit until it asks for one: a 503 is
    /// its flow control ("the message sending rate is too high"), so it
    /// slows the limiter down as a 429 does, instead of opening the breaker.
    public static let hmsDefault: ProviderClientPolicy = {
        var policy = ProviderClientPolicy(rateLimit: .apnsDefault)
        policy.throttleStatuses = [429, 503]
        return policy
    }()
}

/// Sends Push Kit `messages:send` requests for one app with an app-level
/// OAuth token, behind a rate limiter and a circuit breaker.
public final class HMSClient: Sendable {
    private let sendURL: String
    private let http: HTTP2Client
    private let logger: Logger
    let guardian: ProviderGuard
    /// The OAuth token provider (shared by every request of this client).
    public let tokens: HMSAccessTokenProvider

    /// - Throws: `ProviderError.invalidConfiguration` for an app id that is not
    ///   1–64 digits, an empty secret or a bad policy.
    public init(
        configuration: HMSClientConfiguration, http: HTTP2Client, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        guard HMSTranslator.isValidAppID(configuration.appID) else {
            throw ProviderError.invalidConfiguration("hms.app_id", "must be 1-64 digits")
        }
        guard !configuration.clientSecret.isEmpty else {
            throw ProviderError.invalidConfiguration("hms.client_secret", "must not be empty")
        }
        let baseURL = configuration.baseURL.hasSuffix("/")
            ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        self.sendURL = baseURL + HMSTranslator.path(appID: configuration.appID)
        self.http = http
        var logger = logger
        logger[metadataKey: "hms.app_id"] = "\(configuration.appID)"
        self.logger = logger
        self.tokens = HMSAccessTokenProvider(
            appID: configuration.clientID ?? configuration.appID, clientSecret: configuration.clientSecret,
            tokenURL: configuration.tokenURL,
            http: http, now: now, logger: logger)
        self.guardian = try ProviderGuard(host: baseURL, policy: configuration.policy, logger: logger)
    }

    /// Counters for metrics (`tokenRefreshes` counts access tokens fetched).
    public func stats() -> ProviderClientStats {
        var stats = guardian.snapshot()
        stats.tokenRefreshes = tokens.successfulFetchCount
        return stats
    }

    /// False while the circuit breaker is open.
    public var isAcceptingWork: Bool { guardian.isAcceptingWork }

    /// The host the breaker guards (metrics label).
    public var host: String { guardian.host }

    /// Posts `body` (an `HMSTranslator` body) to `/v1/<appId>/messages:send`
    /// with `authorization: Bearer <token>`, after a rate-limit slot. Re-sends
    /// at once what got no HTTP status; an answer that refuses the access
    /// token (HTTP 401, or code 80200001 / 80200003 under any status, since
    /// Push Kit also answers errors with 200) invalidates it and is re-sent
    /// once with a new one; any other answer is returned as is, for
    /// `ResponseClassifier.classifyHMS`.
    /// `priority`: its place while it waits for a stream slot of its host.
    /// - Throws: `HTTPError` for transport failures of the send,
    ///   `ProviderError` when no access token can be had, the circuit is open
    ///   or the rate limit holds the request back; `.gateClosed` when `gate`
    ///   closed before the request could go.
    public func send(body: [UInt8], gate: SendGate? = nil,
                     priority: HTTPRequestPriority = .urgent) async throws -> ProviderResponse {
        try await guardian.admit()
        let token: String
        do {
            token = try await tokens.accessToken()
        } catch {
            guardian.release()
            throw error
        }
        try guardian.pass(gate)
        let response = try await post(body, token: token, gate: gate, priority: priority)
        guard Self.refusesAccessToken(response) else { return response }
        tokenRejected(token, status: response.status)
        return try await post(body, token: try await tokens.accessToken(), gate: gate, priority: priority)
    }

    /// Whether Push Kit refused the access token itself (so a new one may help).
    static func refusesAccessToken(_ response: ProviderResponse) -> Bool {
        if response.status == 401 { return true }
        let code = HMSAnswer(body: response.body).code
        return code == .oauthTokenExpired || code == .oauthAuthenticationError
    }

    @inline(never)
    private func tokenRejected(_ token: String, status: Int) {
        logger.info("hms.access token rejected; fetching a new one", metadata: ["http.status": "\(status)"])
        tokens.invalidate(token: token)
    }

    private func post(_ body: [UInt8], token: String, gate: SendGate?, priority: HTTPRequestPriority) async throws -> ProviderResponse {
        let request = HTTPRequest(
            method: "POST", url: sendURL,
            headers: [
                (name: "authorization", value: "Bearer \(token)"),
                (name: "content-type", value: "application/json; charset=utf-8"),
            ],
            body: body)
        let response = try await guardian.execute(request, on: http, gate: gate, priority: priority)
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
