import COpenSSL

/// A P-256 private key for ECDH, owning one OpenSSL `EVP_PKEY` (freed in `deinit`).
///
/// The application server makes a fresh one per message (RFC 8291 §3.1); a
/// user agent (the tests' decryptor) keeps one per subscription.
public final class WebPushECDHKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never mutated after init, and every
    // OpenSSL operation on it uses its own EVP_PKEY_CTX.
    let raw: OpaquePointer
    /// The public key as an uncompressed point (0x04 || X || Y, 65 bytes).
    public let publicKey: [UInt8]

    /// A new random key.
    public static func generate() throws(WebPushError) -> WebPushECDHKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw WebPushError.crypto("EVP_PKEY_CTX_new_from_name(EC) failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
            throw WebPushError.crypto("cannot set up P-256 key generation")
        }
        var generated: OpaquePointer?
        guard EVP_PKEY_generate(context, &generated) == 1, let generated else {
            throw WebPushError.crypto("EVP_PKEY_generate failed")
        }
        return try WebPushECDHKey(owning: generated)
    }

    /// The key with this private scalar (32 bytes, big-endian, 1 ≤ d < n).
    public convenience init(privateScalar: [UInt8]) throws(WebPushError) {
        guard privateScalar.count == 32, privateScalar.contains(where: { $0 != 0 }),
            privateScalar.lexicographicallyPrecedes(P256.order)
        else {
            throw WebPushError.invalid(.invalidParameter, field: "privateScalar", "not a P-256 private scalar")
        }
        // SEC1 ECPrivateKey without the optional public key; OpenSSL computes it on decoding.
        let der = P256.sec1Prefix + privateScalar + P256.sec1Parameters
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let decoded else { throw WebPushError.crypto("cannot decode the P-256 private key") }
        try self.init(owning: decoded)
    }

    /// Takes ownership of `raw`: freed here on failure, in `deinit` otherwise.
    private init(owning raw: OpaquePointer) throws(WebPushError) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(raw, "encoded-pub-key", &point, point.count, &length) == 1,
            length == 65, point[0] == 0x04
        else {
            EVP_PKEY_free(raw)
            throw WebPushError.crypto("cannot read the uncompressed P-256 public key")
        }
        self.raw = raw
        self.publicKey = point
    }

    deinit { EVP_PKEY_free(raw) }

    /// ECDH with `peer`: the 32-byte shared secret (the X coordinate).
    func sharedSecret(with peer: P256PublicKey) throws(WebPushError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(raw, nil) else { throw WebPushError.crypto("EVP_PKEY_CTX_new failed") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.raw) == 1 else {
            throw WebPushError.crypto("cannot set up ECDH")
        }
        var length = 0
        guard EVP_PKEY_derive(context, nil, &length) == 1, length == 32 else {
            throw WebPushError.crypto("EVP_PKEY_derive (size) failed")
        }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
            throw WebPushError.crypto("EVP_PKEY_derive failed")
        }
        return secret
    }
}

/// A P-256 public key parsed from an uncompressed point, owning its `EVP_PKEY`.
final class P256PublicKey {
    let raw: OpaquePointer

    /// Parses 65 bytes (0x04 || X || Y); OpenSSL rejects a point that is not on the curve.
    /// Throws `.invalidP256DH` naming `field`.
    init(uncompressed point: [UInt8], field: String) throws(WebPushError) {
        guard point.count == 65, point[0] == 0x04 else {
            throw WebPushError.invalid(
                .invalidP256DH, field: field,
                "expected a 65-byte uncompressed P-256 point (0x04 || X || Y), got \(point.count) bytes")
        }
        let der = P256.spkiPrefix + point
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let decoded else {
            _ = ProviderError.drainOpenSSLErrors()
            throw WebPushError.invalid(.invalidP256DH, field: field, "the point is not on the P-256 curve")
        }
        raw = decoded
    }

    deinit { EVP_PKEY_free(raw) }
}

/// Fixed DER around P-256 keys.
enum P256 {
    /// The group order n, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 } up to the 65-byte point.
    static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]
    /// ECPrivateKey { version 1, privateKey OCTET STRING (32) … } up to the scalar.
    static let sec1Prefix: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20]
    /// `[0] prime256v1` after the scalar.
    static let sec1Parameters: [UInt8] = [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
}
