/// A Web Push input that cannot be used, or a cryptographic step that failed.
///
/// Validation errors name what was wrong (`kind`) and which input (`field`),
/// so a subscription rejected at intake says exactly why.
public struct WebPushError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public enum Kind: Sendable, Equatable {
        /// A key or secret is not base64url (RFC 4648 §5, padding optional).
        case invalidBase64URL
        /// `keys.p256dh` is not a 65-byte uncompressed P-256 point on the curve.
        case invalidP256DH
        /// `keys.auth` is not 16 bytes.
        case invalidAuthSecret
        /// The plaintext (plus requested padding) exceeds `limit` bytes.
        case plaintextTooLarge(size: Int, limit: Int)
        /// The endpoint is not an https URL with a host and no userinfo or fragment.
        case invalidEndpoint
        /// The endpoint's host is not one of the push services the app allows.
        case endpointNotAllowed
        /// `Topic` is empty, longer than 32 characters or outside the base64url alphabet.
        case invalidTopic
        /// `TTL` is negative.
        case invalidTTL
        /// The VAPID subject is not a `mailto:` or `https:` URI.
        case invalidSubject
        /// The VAPID private key is not a P-256 EC private key, or its lifetime is out of range.
        case invalidVAPIDKey
        /// An injected salt or padding length is out of range.
        case invalidParameter
        /// An OpenSSL primitive failed (key generation, ECDH, HMAC, AES-GCM).
        case crypto
        /// A body could not be decrypted: bad header, wrong key, bad tag or padding.
        case decryptionFailed
    }

    public var kind: Kind
    /// The input concerned, e.g. `keys.p256dh`, `endpoint`, `topic`.
    public var field: String?
    public var message: String
    /// The first OpenSSL error code, 0 if none.
    public var openSSLCode: UInt
    public var file: String
    public var line: Int

    public var description: String {
        var text = "WebPushError(\(kind))"
        if let field { text += " [\(field)]" }
        text += ": \(message)"
        if openSSLCode != 0 { text += " [openssl \(openSSLCode)]" }
        return text + " at \(file):\(line)"
    }

    init(_ kind: Kind, field: String? = nil, _ message: String, openSSLCode: UInt = 0, file: String, line: Int) {
        self.kind = kind
        self.field = field
        self.message = message
        self.openSSLCode = openSSLCode
        self.file = file
        self.line = line
    }

    static func invalid(
        _ kind: Kind, field: String? = nil, _ message: String, file: String = #fileID, line: Int = #line
    ) -> WebPushError {
        WebPushError(kind, field: field, message, file: file, line: line)
    }

    /// An OpenSSL failure; drains the thread's error queue into the message.
    static func crypto(_ what: String, file: String = #fileID, line: Int = #line) -> WebPushError {
        let (code, text) = ProviderError.drainOpenSSLErrors()
        return WebPushError(
            .crypto, text.isEmpty ? what : "\(what): \(text)", openSSLCode: code, file: file, line: line)
    }

    /// A body that does not decrypt; OpenSSL's queue is drained (not reported: the cause is the input).
    static func decryption(_ what: String, file: String = #fileID, line: Int = #line) -> WebPushError {
        _ = ProviderError.drainOpenSSLErrors()
        return WebPushError(.decryptionFailed, what, file: file, line: line)
    }
}
