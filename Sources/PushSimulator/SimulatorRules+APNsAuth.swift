import Crypto
import Foundation

/// APNs authentication: ES256 provider tokens ("Establishing a token-based
/// connection to APNs") or a TLS client certificate ("Establishing a
/// certificate-based connection to APNs").
extension SimulatorRules {
    static let providerTokenLifetime: Int64 = 3600
    /// Apple: refresh a provider token no more than once every 20 minutes.
    static let providerTokenUpdateWindow: TimeInterval = 20 * 60

    /// Who an accepted request speaks for, and so which topics it may use.
    struct APNsCredential {
        /// The signing key's team topics (empty: any), for token auth.
        var keyTopics: Set<String> = []
        /// The bundle ID named by a client certificate, for certificate auth.
        var certificateBundleID: String?

        func allows(bundleID: String) -> Bool {
            if let certificateBundleID { return certificateBundleID == bundleID }
            return keyTopics.isEmpty || keyTopics.contains(bundleID)
        }
    }

    /// Apple's status and reason for a request that fails authentication.
    struct APNsAuthFailure: Error {
        let status: Int
        let reason: String

        static func forbidden(_ reason: String) -> APNsAuthFailure { .init(status: 403, reason: reason) }
    }

    /// Accepts a provider token (`authorization: bearer …`) or, without one, the
    /// connection's client certificate.
    func authenticate(_ request: SimulatorRequest, now: Date) -> Result<APNsCredential, APNsAuthFailure> {
        if let header = request.header("authorization"), !header.isEmpty {
            return checkProviderToken(header, now: now)
        }
        guard let certificate = request.clientCertificate else { return .failure(.forbidden("MissingProviderToken")) }
        guard certificate.isTrusted else { return .failure(.forbidden("BadCertificate")) }
        if let apnsEnvironment, let environment = certificate.environment, environment != apnsEnvironment {
            return .failure(.forbidden("BadCertificateEnvironment"))
        }
        return .success(APNsCredential(certificateBundleID: certificate.bundleID))
    }

    private func checkProviderToken(_ header: String, now: Date) -> Result<APNsCredential, APNsAuthFailure> {
        guard let token = Self.bearerToken(header) else { return .failure(.forbidden("InvalidProviderToken")) }
        let nowSeconds = Self.seconds(since: now)
        let tokenKey = String(token)
        if let verified = state.verifiedProviderToken(tokenKey) {
            guard let key = apnsKeys[verified.keyID] else { return .failure(.forbidden("InvalidProviderToken")) }
            guard nowSeconds - verified.issuedAt <= Self.providerTokenLifetime else {
                return .failure(.forbidden("ExpiredProviderToken"))
            }
            return .success(APNsCredential(keyTopics: key.topics))
        }
        guard let jwt = JWT(token), jwt.algorithm == "ES256", let keyID = jwt.keyID, let key = apnsKeys[keyID],
            jwt.claims["iss"]?.stringValue == key.teamID, let issuedAt = jwt.claims["iat"]?.integerValue,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jwt.signature),
            key.publicKey.isValidSignature(signature, for: jwt.signingInput)
        else { return .failure(.forbidden("InvalidProviderToken")) }
        // A token issued in the future (beyond generous skew) is not one Apple would accept.
        guard issuedAt <= nowSeconds + Self.providerTokenLifetime else {
            return .failure(.forbidden("InvalidProviderToken"))
        }
        let verified = SimulatorState.VerifiedProviderToken(keyID: keyID, issuedAt: issuedAt)
        guard nowSeconds - issuedAt <= Self.providerTokenLifetime else {
            state.rememberVerified(providerToken: tokenKey, verified)
            return .failure(.forbidden("ExpiredProviderToken"))
        }
        if let allowance = tokenUpdateAllowance,
            !state.noteNewProviderToken(
                keyID: keyID, now: now, allowance: allowance, window: Self.providerTokenUpdateWindow)
        {
            return .failure(APNsAuthFailure(status: 429, reason: "TooManyProviderTokenUpdates"))
        }
        state.rememberVerified(providerToken: tokenKey, verified)
        return .success(APNsCredential(keyTopics: key.topics))
    }
}

/// What the TLS layer learned about the client certificate of a connection,
/// for APNs certificate-based authentication.
public struct SimulatorClientCertificate: Sendable, Equatable {
    /// The subject's common name, e.g. `Apple Push Services: com.example.app`.
    public var commonName: String
    /// Issued by the configured client CA and within its validity period.
    public var isTrusted: Bool

    public init(commonName: String, isTrusted: Bool) {
        self.commonName = commonName
        self.isTrusted = isTrusted
    }

    /// The bundle ID after `": "` in the common name, if any.
    public var bundleID: String? {
        guard let range = commonName.range(of: ": ") else { return nil }
        let bundleID = commonName[range.upperBound...]
        return bundleID.isEmpty ? nil : String(bundleID)
    }

    /// Apple's naming: `Apple Development IOS Push Services` certificates are
    /// sandbox-only, `Apple Production IOS Push Services` production-only, and
    /// `Apple Push Services` (universal) both (nil).
    public var environment: SimulatorAPNsEnvironment? {
        if commonName.hasPrefix("Apple Development") { return .sandbox }
        if commonName.hasPrefix("Apple Production") { return .production }
        return nil
    }
}
