import COpenSSL
import Foundation
import PushCore

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

    /// A new random key (from a pooled P-256 key-generation context).
    public static func generate() throws(WebPushError) -> WebPushECDHKey {
        let generated: OpaquePointer = try ECContextPool.keygen.withContext { context throws(WebPushError) in
            var generated: OpaquePointer?
            guard EVP_PKEY_generate(context, &generated) == 1, let generated else {
                throw WebPushError.crypto("EVP_PKEY_generate failed")
            }
            return generated
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
    ///
    /// The peer is not validated again here: `P256PublicKey` only exists for a
    /// point OpenSSL found on the curve, and P-256's cofactor is 1, so such a
    /// point is in the prime-order group. (OpenSSL's own peer check adds a
    /// scalar multiplication by the order: ~47 µs of ~96 per derivation here.)
    func sharedSecret(with peer: P256PublicKey) throws(WebPushError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(raw, nil) else { throw WebPushError.crypto("EVP_PKEY_CTX_new failed") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer_ex(context, peer.raw, 0) == 1 else {
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
final class P256PublicKey: @unchecked Sendable {
    // @unchecked Sendable: never mutated after init; OpenSSL only reads the
    // key when deriving, each derivation with its own EVP_PKEY_CTX.
    let raw: OpaquePointer

    /// Parses 65 bytes (0x04 || X || Y); OpenSSL rejects a point that is not
    /// on the curve (or has a coordinate outside the field).
    /// Throws `.invalidP256DH` naming `field`.
    ///
    /// Imported from its raw parameters (`EVP_PKEY_fromdata`, pooled context):
    /// ~15 µs here, where decoding the same point as DER SubjectPublicKeyInfo
    /// through OpenSSL 3's decoder framework took ~104 µs.
    init(uncompressed point: [UInt8], field: String) throws(WebPushError) {
        guard point.count == 65, point[0] == 0x04 else {
            throw WebPushError.invalid(
                .invalidP256DH, field: field,
                "expected a 65-byte uncompressed P-256 point (0x04 || X || Y), got \(point.count) bytes")
        }
        let imported: OpaquePointer? = try ECContextPool.fromdata.withContext { context throws(WebPushError) in
            guard EVP_PKEY_fromdata_init(context) == 1 else { throw WebPushError.crypto("EVP_PKEY_fromdata_init failed") }
            var point = point
            return point.withUnsafeMutableBytes { bytes -> OpaquePointer? in
                var key: OpaquePointer?
                var params = [
                    OSSL_PARAM_construct_utf8_string(P256.groupParameter, P256.groupName, 0),
                    OSSL_PARAM_construct_octet_string(P256.publicKeyParameter, bytes.baseAddress, bytes.count),
                    OSSL_PARAM_construct_end(),
                ]
                guard EVP_PKEY_fromdata(context, &key, COpenSSL_EVP_PKEY_PUBLIC_KEY, &params) == 1 else { return nil }
                return key
            }
        }
        guard let imported else {
            _ = ProviderError.drainOpenSSLErrors()
            throw WebPushError.invalid(.invalidP256DH, field: field, "the point is not on the P-256 curve")
        }
        raw = imported
    }

    deinit { EVP_PKEY_free(raw) }
}

/// `EVP_PKEY_CTX`s for P-256, kept for reuse: OpenSSL 3 looks the algorithm
/// up among its providers each time a context is made (~13 µs here), more
/// than a key generation with a ready context costs (~12 µs).
final class ECContextPool: @unchecked Sendable {
    // @unchecked Sendable: a context is only reached through `free` (locked),
    // and a caller has it to itself between taking and returning it.
    private let free = Locked<[OpaquePointer]>([])
    private let prepare: @Sendable (OpaquePointer) -> Bool
    /// Contexts kept when all are returned; more are made under load and freed.
    private let keep = 16

    /// Key generation, with the group set.
    static let keygen = ECContextPool { EVP_PKEY_keygen_init($0) == 1 && EVP_PKEY_CTX_set_group_name($0, "P-256") == 1 }
    /// Key import (`EVP_PKEY_fromdata_init` is called at each use).
    static let fromdata = ECContextPool { _ in true }

    private init(prepare: @escaping @Sendable (OpaquePointer) -> Bool) {
        self.prepare = prepare
    }

    deinit { free.withLock { $0.forEach(EVP_PKEY_CTX_free) } }

    func withContext<T>(_ body: (OpaquePointer) throws(WebPushError) -> T) throws(WebPushError) -> T {
        let context: OpaquePointer
        if let pooled = free.withLock({ $0.popLast() }) {
            context = pooled
        } else {
            guard let made = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
                throw WebPushError.crypto("EVP_PKEY_CTX_new_from_name(EC) failed")
            }
            guard prepare(made) else {
                EVP_PKEY_CTX_free(made)
                throw WebPushError.crypto("cannot set up a P-256 context")
            }
            context = made
        }
        defer {
            let kept = free.withLock { contexts -> Bool in
                guard contexts.count < keep else { return false }
                contexts.append(context)
                return true
            }
            if !kept { EVP_PKEY_CTX_free(context) }
        }
        return try body(context)
    }
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
    /// `OSSL_PARAM` names and the group, as C strings that live as long as the process
    /// (OpenSSL's parameter constructors take `char *`; it only reads them).
    nonisolated(unsafe) static let groupParameter: UnsafeMutablePointer<CChar> = strdup("group")
    nonisolated(unsafe) static let groupName: UnsafeMutablePointer<CChar> = strdup("P-256")
    nonisolated(unsafe) static let publicKeyParameter: UnsafeMutablePointer<CChar> = strdup("pub")
}
