import PushCore
import Foundation
import Logging
import PushHTTP

/// OAuth2 access tokens for FCM via the JWT bearer grant (RS256-signed
/// assertion posted to the account's `token_uri`).
///
/// Tokens are cached, shared by concurrent callers and refreshed before they
/// expire, and failed fetches are backed off, by `AccessTokenCache`.
public final class FCMAccessTokenProvider: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let grantType = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

    /// The first back-off after a failed fetch; it doubles per further failure.
    public static var failureBackoff: Double { AccessTokenCache.failureBackoff }
    /// The longest back-off after failed fetches.
    public static var maxFailureBackoff: Double { AccessTokenCache.maxFailureBackoff }

    let account: FCMServiceAccount
    let signingKey: EVPKey
    let httpClient: HTTP2Client
    let grantURL: String
    let cache: AccessTokenCache
    private let logger: Logger

    /// - Parameters:
    ///   - tokenURIOverride: where to POST the grant instead of the account's
    ///     `token_uri`; the JWT's `aud` names that endpoint too (a token
    ///     endpoint accepts only assertions meant for it). To reach Google's
    ///     endpoint through a proxy, use an HTTP CONNECT proxy instead.
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
        var logger = logger
        logger[metadataKey: "fcm.client_email"] = "\(account.clientEmail)"
        self.logger = logger
        self.cache = AccessTokenCache(label: "fcm", now: now, logger: logger)
    }

    var accountKeyID: String { account.privateKeyID }
    var accountEmail: String { account.clientEmail }

    /// How many token fetches were started (diagnostics and tests).
    public var fetchCount: Int { cache.fetchCount }

    /// How many fetches brought a token.
    public var successfulFetchCount: Int { cache.successfulFetchCount }

    /// The clock tokens are cached by (the grant's issue time uses it too).
    var currentTime: @Sendable () -> Date { cache.currentTime }

    /// A valid access token, fetched if none is cached (see `AccessTokenCache`).
    /// - Throws: `ProviderError` (`.tokenEndpoint`, `.tokenEndpointTransport`, `.invalidTokenResponse`).
    public func accessToken() async throws -> String {
        try await cache.token(fetch: { try await self.fetch() })
    }

    /// Forgets `token` (the provider refused it) unless a newer one already replaced it.
    public func invalidate(token: String) {
        cache.invalidate(token: token)
    }
}
