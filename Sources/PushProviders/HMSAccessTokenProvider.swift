import Foundation
import Logging
import PushCore
import PushHTTP

/// App-level OAuth 2.0 access tokens for Huawei Push Kit, by the client
/// credentials grant (`grant_type=client_credentials`, the app id as
/// `client_id`, the app secret as `client_secret`, form-encoded) posted to
/// `https://oauth-login.cloud.huawei.com/oauth2/v3/token`; the answer is
/// `{"access_token":…,"expires_in":3600,"token_type":"Bearer"}` (Huawei's
/// "Client Credentials" guide, developer.huawei.com/consumer/en/doc/HMSCore-Guides/android-server-dev-0000001050040110;
/// the same grant in HMS-Core/hms-push-serverdemo-java, src/main/java/com/huawei/push/messaging/HuaweiCredential.java).
///
/// Shaped like `FCMAccessTokenProvider`: a token is cached until shortly
/// before it expires (5 minutes, or 10 % of its lifetime if that is shorter);
/// concurrent callers share one fetch; after a failed fetch, callers fail fast
/// with that error for a back-off doubling from `failureBackoff` to
/// `maxFailureBackoff`. Huawei flow-controls frequent token requests, so one
/// fetch per app however many sends wait matters here.
public final class HMSAccessTokenProvider: Sendable {
    struct Cached: Sendable {
        var token: String
        var refreshAt: Date
    }

    struct Failure: Sendable {
        var error: any Error
        var until: Date
        var streak: Int
    }

    struct State: Sendable {
        var cached: Cached?
        var inFlight: Task<String, any Error>?
        var fetches = 0
        var successfulFetches = 0
        var failure: Failure?
    }

    /// The first back-off after a failed fetch; it doubles per further failure.
    public static let failureBackoff: Double = 0.5
    /// The longest back-off after failed fetches.
    public static let maxFailureBackoff: Double = 30

    let appID: String
    let clientSecret: String
    let httpClient: HTTP2Client
    let tokenURL: String
    let currentTime: @Sendable () -> Date
    let logger: Logger
    private let state = Locked(State())

    public init(
        appID: String, clientSecret: String, tokenURL: String, http: HTTP2Client,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger
    ) {
        self.appID = appID
        self.clientSecret = clientSecret
        self.tokenURL = tokenURL
        self.httpClient = http
        self.currentTime = now
        var logger = logger
        logger[metadataKey: "hms.app_id"] = "\(appID)"
        self.logger = logger
    }

    /// How many token fetches were started (diagnostics and tests).
    public var fetchCount: Int { state.withLock { $0.fetches } }

    /// How many fetches brought a token.
    public var successfulFetchCount: Int { state.withLock { $0.successfulFetches } }

    /// A valid access token, fetched if none is cached.
    /// - Throws: `ProviderError` (`.tokenEndpoint`, `.tokenEndpointTransport`, `.invalidTokenResponse`).
    public func accessToken() async throws -> String {
        enum Next {
            case cached(String)
            case wait(Task<String, any Error>)
            case fail(any Error)
        }
        let now = currentTime()
        let next = state.withLock { state -> Next in
            if let cached = state.cached, now < cached.refreshAt { return .cached(cached.token) }
            if let inFlight = state.inFlight { return .wait(inFlight) }
            if let failure = state.failure, now < failure.until {
                let wait = Duration.seconds(failure.until.timeIntervalSince(now))
                return .fail((failure.error as? ProviderError)?.with(retryAfter: wait) ?? failure.error)
            }
            state.fetches += 1
            // Unstructured on purpose: a cancelled caller must not cancel the
            // fetch the other callers are waiting for.
            let task = Task { try await self.fetchAndCache() }
            state.inFlight = task
            return .wait(task)
        }
        switch next {
        case .cached(let token): return token
        case .wait(let task): return try await task.value
        case .fail(let error): throw error
        }
    }

    /// Forgets `token` (after Push Kit refused it) unless a newer one already replaced it.
    public func invalidate(token: String) {
        state.withLock { state in
            if state.cached?.token == token { state.cached = nil }
        }
    }

    private func fetchAndCache() async throws -> String {
        do {
            let (token, lifetime) = try await fetch()
            let margin = min(300, lifetime * 0.1)
            state.withLock { state in
                state.cached = Cached(token: token, refreshAt: currentTime().addingTimeInterval(lifetime - margin))
                state.inFlight = nil
                state.failure = nil
                state.successfulFetches += 1
            }
            logger.debug("hms.access token fetched", metadata: ["hms.expires_in": "\(Int(lifetime))"])
            return token
        } catch {
            let now = currentTime()
            state.withLock { state in
                state.inFlight = nil
                let streak = (state.failure?.streak ?? 0) + 1
                let backoff = min(Self.maxFailureBackoff, Self.failureBackoff * Double(1 << min(streak - 1, 16)))
                state.failure = Failure(error: error, until: now.addingTimeInterval(backoff), streak: streak)
            }
            logger.warning("hms.access token fetch failed", metadata: ["hms.error": "\(error)"])
            throw error
        }
    }
}
