import COpenSSL
import PushHTTP

/// A credential, key, token-endpoint or protection failure in a provider client.
/// (HTTP transport failures of the push request itself throw `HTTPError`.)
public struct ProviderError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public enum Kind: Sendable, Equatable {
        /// A private or public key could not be read or has the wrong type.
        case invalidKey
        /// The FCM service-account JSON is unreadable or incomplete.
        case invalidServiceAccount
        /// OpenSSL failed while signing a JWT.
        case signing
        /// The OAuth token endpoint answered with an error status.
        case tokenEndpoint
        /// The OAuth token endpoint could not be reached (see `underlying`).
        case tokenEndpointTransport
        /// The OAuth token endpoint answered 200 with an unusable body.
        case invalidTokenResponse
        /// The host's circuit breaker is open: the request was not sent (`host`, `retryAfter`).
        case circuitOpen
        /// The client's rate limit (or a provider's `Retry-After` pause) holds
        /// the request back longer than it may wait; not sent (`retryAfter`).
        case rateLimited
        /// APNs answered `429 TooManyProviderTokenUpdates`: no new token is
        /// minted; the client backs off for `retryAfter` with its current token.
        case providerTokenThrottled
        /// The provider rejected the client's credentials themselves (APNs
        /// `BadCertificate`, `BadCertificateEnvironment`): no retry can help.
        case credentialsRejected
        /// A client setting is out of range or inconsistent (`message` names it).
        case invalidConfiguration
        /// The request's `SendGate` was closed before it could go (its
        /// campaign was cancelled while it waited): not sent (`message` says why).
        case gateClosed
    }

    public var kind: Kind
    /// A human-readable explanation, with OpenSSL's error queue or the
    /// endpoint's `error` / `error_description` where there is one.
    public var message: String
    /// The token endpoint's HTTP status, for `.tokenEndpoint`.
    public var httpStatus: Int?
    /// The OAuth `error` code, e.g. `invalid_grant`.
    public var oauthError: String?
    /// The first OpenSSL error code from `ERR_get_error`, 0 if none.
    public var openSSLCode: UInt
    /// The transport error behind `.tokenEndpointTransport`.
    public var underlying: HTTPError?
    /// How long to wait before trying again, when known.
    public var retryAfter: Duration?
    /// The provider host concerned (`.circuitOpen`), e.g. `https://api.push.apple.com`.
    public var host: String?
    /// The provider's reason string (`.credentialsRejected`, `.providerTokenThrottled`).
    public var providerReason: String?
    public var file: String
    public var line: Int

    /// Token endpoint 5xx / 429 / transport trouble is worth retrying; bad
    /// keys, bad accounts and `invalid_grant` are not.
    public var isRetriable: Bool {
        switch kind {
        case .tokenEndpoint:
            guard let status = httpStatus else { return false }
            return status >= 500 || status == 429 || status == 408
        case .tokenEndpointTransport: return underlying?.isRetriable ?? true
        case .invalidTokenResponse: return true
        case .circuitOpen, .rateLimited, .providerTokenThrottled: return true
        case .invalidKey, .invalidServiceAccount, .signing, .credentialsRejected, .invalidConfiguration, .gateClosed: return false
        }
    }

    public var description: String {
        var text = "ProviderError(\(kind)): \(message)"
        if openSSLCode != 0 { text += " [openssl \(openSSLCode)]" }
        return text + " at \(file):\(line)"
    }

    init(
        kind: Kind, message: String, httpStatus: Int? = nil, oauthError: String? = nil,
        openSSLCode: UInt = 0, underlying: HTTPError? = nil, retryAfter: Duration? = nil, host: String? = nil,
        providerReason: String? = nil, file: String, line: Int
    ) {
        self.retryAfter = retryAfter
        self.host = host
        self.providerReason = providerReason
        self.kind = kind
        self.message = message
        self.httpStatus = httpStatus
        self.oauthError = oauthError
        self.openSSLCode = openSSLCode
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// A key that cannot be used; drains OpenSSL's error queue into the message.
    public static func invalidKey(_ what: String, file: String = #fileID, line: Int = #line) -> ProviderError {
        let (code, text) = drainOpenSSLErrors()
        return ProviderError(
            kind: .invalidKey, message: text.isEmpty ? what : "\(what): \(text)", openSSLCode: code,
            file: file, line: line)
    }

    /// A service account that cannot be used.
    public static func invalidServiceAccount(
        _ what: String, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(kind: .invalidServiceAccount, message: what, file: file, line: line)
    }

    /// OpenSSL failed to sign; drains its error queue into the message.
    public static func signing(_ what: String, file: String = #fileID, line: Int = #line) -> ProviderError {
        let (code, text) = drainOpenSSLErrors()
        return ProviderError(
            kind: .signing, message: text.isEmpty ? what : "\(what): \(text)", openSSLCode: code,
            file: file, line: line)
    }

    /// The token endpoint answered `status` with OAuth `error` / `description`.
    public static func tokenEndpoint(
        status: Int, error: String?, description: String?, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        var text = "OAuth token endpoint answered HTTP \(status)"
        if let error { text += ": \(error)" }
        if let description { text += " (\(description))" }
        return ProviderError(
            kind: .tokenEndpoint, message: text, httpStatus: status, oauthError: error, file: file, line: line)
    }

    /// The token endpoint could not be reached.
    public static func tokenEndpointTransport(
        _ error: HTTPError, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(
            kind: .tokenEndpointTransport, message: "OAuth token endpoint unreachable: \(error.message)",
            underlying: error, file: file, line: line)
    }

    /// The token endpoint's 200 body was not a usable token.
    public static func invalidTokenResponse(
        _ what: String, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(kind: .invalidTokenResponse, message: what, file: file, line: line)
    }

    /// Empties OpenSSL's per-thread error queue: the first code and all texts.
    static func drainOpenSSLErrors() -> (UInt, String) {
        var first: UInt = 0
        var texts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if first == 0 { first = code }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let bytes = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
            texts.append(String(decoding: bytes, as: UTF8.self))
        }
        return (first, texts.joined(separator: "; "))
    }
}
