/// Message encryption for Web Push (RFC 8291) on the `aes128gcm` content coding (RFC 8188).
///
/// Per message: a fresh P-256 key pair (`as_private`, `as_public`) and a random
/// 16-byte salt. ECDH(as_private, ua_public) gives `ecdh_secret`; HKDF-SHA-256
/// with the subscription's auth secret as salt and info
/// `"WebPush: info" || 0x00 || ua_public || as_public` gives the 32-byte IKM
/// (RFC 8291 §3.3, §3.4); RFC 8188 then derives the CEK and nonce from IKM
/// and the salt. The body is one record, `rs` = 4096, `keyid` = `as_public`.
///
/// **Size rule** (RFC 8291 §4, RFC 8030 §7.2): a push service need not accept
/// more than 4096 bytes of body. The body is the 86-byte header (16 salt + 4 rs
/// + 1 idlen + 65 keyid) plus the record: plaintext, the 0x02 delimiter (1),
/// any padding, and the 16-byte AES-GCM tag. So plaintext + padding ≤
/// 4096 − 86 − 1 − 16 = **3993 bytes** (`maxPlaintextSize`). That also keeps
/// the record (≤ 4010 bytes) below `rs`, as §4 requires.
public enum WebPushEncryption {
    /// `rs` in the header: push messages are one record, so any size above the record works; 4096 as in RFC 8291's example.
    public static let recordSize: UInt32 = 4096
    /// Header bytes: salt 16 + rs 4 + idlen 1 + keyid 65.
    public static let headerSize = 86
    /// The largest body a push service must accept (RFC 8030 §7.2).
    public static let maxBodySize = 4096
    /// The largest plaintext (including padding) that fits in `maxBodySize`: 3993.
    public static let maxPlaintextSize = maxBodySize - headerSize - 1 - WebPushPrimitives.tagSize

    static let keyInfoLabel = Array("WebPush: info".utf8) + [0]

    /// Encrypts `plaintext` for a subscription with a fresh ephemeral key and salt.
    /// - Parameter padding: zero bytes added after the delimiter to hide the length.
    /// - Throws: `.plaintextTooLarge` beyond `maxPlaintextSize`; `.crypto` if OpenSSL fails.
    public static func encrypt(
        _ plaintext: [UInt8], for keys: WebPushSubscriptionKeys, padding: Int = 0
    ) throws(WebPushError) -> [UInt8] {
        try encrypt(
            plaintext, for: keys, padding: padding, ephemeralKey: try WebPushECDHKey.generate(),
            salt: WebPushPrimitives.randomBytes(16))
    }

    /// Encrypts with a given ephemeral key and salt: for test vectors only;
    /// reusing either for two messages breaks the encryption.
    public static func encrypt(
        _ plaintext: [UInt8], for keys: WebPushSubscriptionKeys, padding: Int = 0,
        ephemeralKey: WebPushECDHKey, salt: [UInt8]
    ) throws(WebPushError) -> [UInt8] {
        guard padding >= 0 else { throw WebPushError.invalid(.invalidParameter, field: "padding", "must be ≥ 0") }
        let size = plaintext.count + padding
        guard size <= maxPlaintextSize else {
            throw WebPushError.invalid(
                .plaintextTooLarge(size: size, limit: maxPlaintextSize), field: "plaintext",
                "\(size) bytes of plaintext and padding exceed \(maxPlaintextSize) (4096-byte body)")
        }
        guard salt.count == 16 else { throw WebPushError.invalid(.invalidParameter, field: "salt", "must be 16 bytes") }
        let ecdhSecret = try ephemeralKey.sharedSecret(with: keys.publicKey)
        let ikm = try inputKeyingMaterial(
            ecdhSecret: ecdhSecret, authSecret: keys.auth, userAgentPublic: keys.p256dh,
            serverPublic: ephemeralKey.publicKey)
        return try AES128GCMContentCoding.encrypt(
            plaintext, ikm: ikm, salt: salt, keyID: ephemeralKey.publicKey, recordSize: recordSize, padding: padding)
    }

    /// RFC 8291 §3.4: IKM = HKDF(salt: auth_secret, IKM: ecdh_secret, info: key_info, L: 32).
    static func inputKeyingMaterial(
        ecdhSecret: [UInt8], authSecret: [UInt8], userAgentPublic: [UInt8], serverPublic: [UInt8]
    ) throws(WebPushError) -> [UInt8] {
        try WebPushPrimitives.hkdf(
            salt: authSecret, ikm: ecdhSecret, info: keyInfoLabel + userAgentPublic + serverPublic, length: 32)
    }
}

/// The user agent's side of RFC 8291: decrypts what `WebPushEncryption` made,
/// with the subscription's private key and auth secret (tests and tools; a
/// browser does this in production).
public struct WebPushDecryptor: Sendable {
    public let privateKey: WebPushECDHKey
    public let authSecret: [UInt8]

    public init(privateKey: WebPushECDHKey, authSecret: [UInt8]) throws(WebPushError) {
        guard authSecret.count == 16 else {
            throw WebPushError.invalid(.invalidAuthSecret, field: "authSecret", "expected 16 bytes")
        }
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// The plaintext; throws `.decryptionFailed` for a body this subscription cannot open.
    public func decrypt(_ body: [UInt8]) throws(WebPushError) -> [UInt8] {
        let header = try AES128GCMContentCoding.parseHeader(body)
        let server: P256PublicKey
        do throws(WebPushError) {
            server = try P256PublicKey(uncompressed: header.keyID, field: "keyid")
        } catch {
            throw WebPushError.decryption("keyid is not a 65-byte P-256 point: \(error.message)")
        }
        let ecdhSecret = try privateKey.sharedSecret(with: server)
        let ikm = try WebPushEncryption.inputKeyingMaterial(
            ecdhSecret: ecdhSecret, authSecret: authSecret, userAgentPublic: privateKey.publicKey,
            serverPublic: header.keyID)
        return try AES128GCMContentCoding.decrypt(body, ikm: ikm)
    }
}
