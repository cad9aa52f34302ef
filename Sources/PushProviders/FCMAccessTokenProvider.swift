import PushCore
import Foundation
import Logging
import PushHTTP

/// OAuth2 access tokens for FCM via the JWT bearer grant (RS256-signed
/// assertion posted to the account's `token_uri`).
///
/// A token is cached until shortly before it expires (5 minutes, or 10 % of
/// its lifetime if that is shorter). Concurrent callers share one fetch. After
/// a failed fetch, callers fail fast with that error (and its `retryAfter`)
/// for a back-off that doubles from `failureBackoff` up to `maxFailureBackoff`,
/// so an endpoint that is down sees one attempt per back-off, never a stampede.
public final class FCMAccessTokenProvider: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let grantType = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

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

    let account: FCMServiceAccount
    let signingKey: EVPKey
    let httpClient: HTTP2Client
    let grantURL: String
    let currentTime: @Sendable () -> Date
    private let logger: Logger
    private let state = Locked(State())

    /// - Parameters:
    ///   - tokenURIOverride: where to POST the grant instead of the account's
    ///     `token_uri` (the JWT's `aud` stays the account's `token_uri`).
    /// - Throws: `ProviderError.invalidKey` unless `private_key` is an RSA key.
    public init(
        account: FCMServiceAccount, http: HTTP2Client, tokenURIOverride: String? = nil,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger
    ) throws {
        let key = try EVPKey(pem: account.privateKey, kind: .privateKey)
        guard key.isRSA else {
            throw ProviderError.invalidKey("service account \(account.clientEmail) private_key is not an RSA key")
        }
        self.account = account
        self.signingKey = key
        self.httpClient = http
        self.grantURL = tokenURIOverride ?? account.tokenURI
        self.currentTime = now
        var logger = logger
        logger[metadataKey: "fcm.client_email"] = "\(account.clientEmail)"
        self.logger = logger
    }

    var accountKeyID: String { account.privateKeyID }
    var accountEmail: String { account.clientEmail }
    var accountTokenURI: String { account.tokenURI }

    /// How many token fetches were started (diagnostics and tests).
    public var fetchCount: Int { state.withLock { $0.fetches } }

    /// How many fetches brought a token.
    public var successfulFetchCount: Int { state.withLock { $0.successfulFetches } }

    /// A valid access token, fetched if none is cached.
    /// - Throws: `ProviderError` (`.tokenEndpoint`, `.tokenEndpointTransport`, …).
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

    /// Forgets `token` (after a 401) unless a newer one already replaced it.
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
            logger.debug("fcm.access token fetched", metadata: ["fcm.expires_in": "\(Int(lifetime))"])
            return token
        } catch {
            let now = currentTime()
            state.withLock { state in
                state.inFlight = nil
                let streak = (state.failure?.streak ?? 0) + 1
                let backoff = min(Self.maxFailureBackoff, Self.failureBackoff * Double(1 << min(streak - 1, 16)))
                state.failure = Failure(error: error, until: now.addingTimeInterval(backoff), streak: streak)
            }
            logger.warning("fcm.access token fetch failed", metadata: ["fcm.error": "\(error)"])
            throw error
        }
    }
}
