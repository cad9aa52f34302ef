import PushHTTP

/// Which APNs host a device token belongs to.
public enum APNsEnvironment: String, Sendable, Hashable, Codable {
    /// `api.push.apple.com`: App Store, TestFlight and ad-hoc builds.
    case production
    /// `api.sandbox.push.apple.com`: development builds.
    case sandbox
}

/// A TLS client certificate for APNs certificate-based authentication.
public struct APNsClientCertificate: Sendable, Equatable {
    /// How the certificate file is encoded.
    public enum Format: String, Sendable, Equatable {
        /// PEM certificate, with the key in `keyPath` (or the same file).
        case pem = "PEM"
        /// A PKCS#12 bundle holding certificate and key.
        case pkcs12 = "P12"
    }

    /// The certificate (PEM) or PKCS#12 bundle.
    public var certificatePath: String
    /// The PEM private key; nil when it is in `certificatePath` (always for PKCS#12).
    public var keyPath: String?
    public var format: Format
    /// The passphrase of the key or the PKCS#12 bundle.
    public var passphrase: String?

    public init(certificatePath: String, keyPath: String? = nil, format: Format = .pem, passphrase: String? = nil) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.format = format
        self.passphrase = passphrase
    }

    /// The connection-pool key for this certificate (see `HTTP2ClientPool`).
    public var poolKey: String { "apns|cert:\(certificatePath)" }

    /// Puts the certificate on an HTTP client configuration (curl's
    /// `CURLOPT_SSLCERT`, `SSLKEY`, `SSLCERTTYPE`, `KEYPASSWD`).
    public func apply(to configuration: inout HTTPClientConfiguration) {
        configuration.clientCertificatePath = certificatePath
        configuration.clientKeyPath = keyPath
        configuration.clientCertificateType = format.rawValue
        configuration.clientKeyPassword = passphrase
        configuration.connectionIdentity = poolKey
    }
}

/// Where and as whom an `APNsClient` sends.
public struct APNsClientConfiguration: Sendable {
    /// Production APNs.
    public static let productionURL = "https://api.push.apple.com"
    /// Sandbox (development) APNs.
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    /// Scheme + host (+ port) for production tokens (and for every token when
    /// `sandboxBaseURL` is nil), no trailing slash.
    public var baseURL: String
    /// Scheme + host (+ port) for sandbox tokens; nil sends them to `baseURL` too.
    public var sandboxBaseURL: String?
    /// Apple Developer team ID (token auth).
    public var teamID: String
    /// ID of the `.p8` signing key (token auth).
    public var keyID: String
    /// The `.p8` key's PEM text (token auth).
    public var privateKeyPEM: String
    /// Certificate auth instead of a provider token; the `HTTP2Client` must
    /// carry the same certificate (`APNsClientCertificate.apply(to:)`).
    public var certificate: APNsClientCertificate?
    /// Age at which a new provider token is signed (Apple: 20–60 minutes).
    public var tokenRefreshInterval: Duration
    /// How long to back off after `429 TooManyProviderTokenUpdates` when the
    /// answer carries no `Retry-After`.
    public var tokenUpdateBackoff: Duration
    /// Rate limit, circuit breaker and re-send policy.
    public var policy: ProviderClientPolicy

    /// Token (JWT) authentication.
    public init(
        baseURL: String = APNsClientConfiguration.productionURL, teamID: String, keyID: String,
        privateKeyPEM: String, tokenRefreshInterval: Duration = .seconds(3000),
        sandboxBaseURL: String? = nil, policy: ProviderClientPolicy = .apnsDefault,
        tokenUpdateBackoff: Duration = .seconds(60)
    ) {
        self.baseURL = baseURL
        self.sandboxBaseURL = sandboxBaseURL
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
        self.certificate = nil
        self.tokenRefreshInterval = tokenRefreshInterval
        self.tokenUpdateBackoff = tokenUpdateBackoff
        self.policy = policy
    }

    /// Certificate authentication.
    public init(
        baseURL: String = APNsClientConfiguration.productionURL, certificate: APNsClientCertificate,
        sandboxBaseURL: String? = nil, policy: ProviderClientPolicy = .apnsDefault
    ) {
        self.init(
            baseURL: baseURL, teamID: "", keyID: "", privateKeyPEM: "", sandboxBaseURL: sandboxBaseURL,
            policy: policy)
        self.certificate = certificate
    }

    /// The connection-pool key: one team (or one certificate) per connection.
    public var poolKey: String { certificate?.poolKey ?? "apns|team:\(teamID)" }
}
