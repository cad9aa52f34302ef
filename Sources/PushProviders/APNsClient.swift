import Foundation
import Logging
import PushCore
import PushHTTP

/// Sends translated APNs requests, authenticated by a provider token (JWT) or
/// a TLS client certificate, behind a rate limiter and a circuit breaker.
///
/// One client serves one app (one team or one certificate); give it an
/// `HTTP2Client` of its own kind (`APNsClientConfiguration.poolKey`), since
/// APNs allows one team per connection.
public final class APNsClient: Sendable {
    private let productionURL: String
    private let sandboxURL: String
    let httpClient: HTTP2Client
    let logger: Logger
    /// True when the client authenticates with a TLS client certificate, not a JWT.
    public let usesCertificateAuth: Bool
    let tokenUpdateBackoffInterval: Duration
    let guardian: ProviderGuard
    /// The token provider (shared by every request of this client); with
    /// certificate auth its `currentToken()` throws.
    public let tokens: APNsTokenProvider

    /// - Throws: `ProviderError.invalidKey` if the key cannot be used,
    ///   `.invalidConfiguration` for a bad refresh interval or policy, or an
    ///   `http` client whose connections belong to another team or certificate.
    public init(
        configuration: APNsClientConfiguration, http: HTTP2Client, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
        let production = trimmed(configuration.baseURL)
        self.productionURL = production
        self.sandboxURL = trimmed(configuration.sandboxBaseURL ?? configuration.baseURL)
        if let identity = http.configuration.connectionIdentity, identity != configuration.poolKey {
            throw ProviderError.invalidConfiguration(
                "apns.http", "the HTTP client's connections belong to \(identity), not \(configuration.poolKey)")
        }
        var logger = logger
        if let certificate = configuration.certificate {
            guard http.configuration.clientCertificatePath == certificate.certificatePath else {
                throw ProviderError.invalidConfiguration(
                    "apns.certificate", "the HTTP client must carry the certificate (APNsClientCertificate.apply(to:))")
            }
            logger[metadataKey: "apns.certificate"] = "\(certificate.certificatePath)"
            self.tokens = APNsTokenProvider(certificateAuthenticated: configuration.teamID)
        } else {
            logger[metadataKey: "apns.key_id"] = "\(configuration.keyID)"
            self.tokens = try APNsTokenProvider(
                teamID: configuration.teamID, keyID: configuration.keyID,
                privateKeyPEM: configuration.privateKeyPEM,
                refreshInterval: configuration.tokenRefreshInterval, now: now)
        }
        self.usesCertificateAuth = configuration.certificate != nil
        self.tokenUpdateBackoffInterval = configuration.tokenUpdateBackoff
        self.httpClient = http
        self.logger = logger
        self.guardian = try ProviderGuard(host: production, policy: configuration.policy, logger: logger)
    }

    /// Counters for metrics (`tokenRefreshes` counts every token signed).
    public func stats() -> ProviderClientStats {
        var stats = guardian.snapshot()
        stats.tokenRefreshes = usesCertificateAuth ? 0 : tokens.mintCount
        return stats
    }

    /// False while the circuit breaker is open: the worker should pause intake
    /// for this app and provider instead of filling the retry topics.
    public var isAcceptingWork: Bool { guardian.isAcceptingWork }

    /// The circuit breaker's state now.
    public var circuitState: CircuitBreaker.State { guardian.snapshot().circuitState }

    /// The host the breaker guards (metrics label).
    public var host: String { guardian.host }

    /// The base URL for a device token of `environment` (nil: production).
    public func baseURL(for environment: APNsEnvironment?) -> String {
        environment == .sandbox ? sandboxURL : productionURL
    }
}
