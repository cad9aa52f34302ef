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
/// Cached like FCM's tokens, by the same `AccessTokenCache`: one fetch per app
/// however many sends wait (Huawei flow-controls frequent token requests),
/// refreshed before expiry, failures backed off.
public final class HMSAccessTokenProvider: Sendable {
    /// The first back-off after a failed fetch; it doubles per further failure.
    public static var failureBackoff: Double { AccessTokenCache.failureBackoff }
    /// The longest back-off after failed fetches.
    public static var maxFailureBackoff: Double { AccessTokenCache.maxFailureBackoff }

    let appID: String
    let clientSecret: String
    let httpClient: HTTP2Client
    let tokenURL: String
    let cache: AccessTokenCache
    let logger: Logger

    public init(
        appID: String, clientSecret: String, tokenURL: String, http: HTTP2Client,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger
    ) {
        self.appID = appID
        self.clientSecret = clientSecret
        self.tokenURL = tokenURL
        self.httpClient = http
        var logger = logger
        logger[metadataKey: "hms.app_id"] = "\(appID)"
        self.logger = logger
        self.cache = AccessTokenCache(label: "hms", now: now, logger: logger)
    }

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
