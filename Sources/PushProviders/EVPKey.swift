import COpenSSL
import CShims

/// Owns one OpenSSL `EVP_PKEY*`; `EVP_PKEY_free` in `deinit`.
final class EVPKey: @unchecked Sendable {
    // @unchecked Sendable: the key is never mutated after init, and OpenSSL 3
    // allows concurrent signing/verifying with one EVP_PKEY from many threads
    // (each operation uses its own EVP_MD_CTX).
    let raw: OpaquePointer

    enum Kind { case privateKey, publicKey }

    /// Reads a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, or traditional
    /// `BEGIN EC/RSA PRIVATE KEY`) or a PEM public key (`BEGIN PUBLIC KEY`).
    init(pem: String, kind: Kind) throws(ProviderError) {
        _ = ProviderError.drainOpenSSLErrors()
        let bytes = Array(pem.utf8)
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            switch kind {
            case .privateKey: return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            case .publicKey: return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            }
        }
        guard let loaded else {
            throw ProviderError.invalidKey(
                kind == .privateKey ? "cannot read the PEM private key" : "cannot read the PEM public key")
        }
        raw = loaded
    }

    deinit { EVP_PKEY_free(raw) }

    var isEC: Bool { EVP_PKEY_get_base_id(raw) == CShims_EVP_PKEY_EC() }
    var isRSA: Bool { EVP_PKEY_get_base_id(raw) == CShims_EVP_PKEY_RSA() }
    var bits: Int { Int(EVP_PKEY_get_bits(raw)) }

    /// Signs `message` with SHA-256: DER ECDSA-Sig-Value for EC keys,
    /// PKCS#1 v1.5 for RSA keys.
    func signSHA256(_ message: [UInt8]) throws(ProviderError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw ProviderError.signing("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, raw) == 1 else {
            throw ProviderError.signing("EVP_DigestSignInit failed")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw ProviderError.signing("EVP_DigestSign (size) failed")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw ProviderError.signing("EVP_DigestSign failed")
        }
        return Array(signature.prefix(length))
    }

    /// Checks a SHA-256 signature (DER for EC keys) over `message`.
    func verifySHA256(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, raw) == 1 else {
            _ = ProviderError.drainOpenSSLErrors()
            return false
        }
        let ok = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        _ = ProviderError.drainOpenSSLErrors()
        return ok
    }
}

/// Conversions between DER ECDSA-Sig-Value and JOSE's fixed-size r||s.
enum ECDSASignature {
    /// DER → 64-byte r||s (each big-endian, left-padded to 32 bytes).
    static func rawFromDER(_ der: [UInt8], componentSize: Int = 32) throws(ProviderError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = parsed else { throw ProviderError.signing("cannot parse DER ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: componentSize * 2)
        let ok = raw.withUnsafeMutableBufferPointer { out -> Bool in
            guard let base = out.baseAddress,
                let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature)
            else { return false }
            return BN_bn2binpad(r, base, Int32(componentSize)) == Int32(componentSize)
                && BN_bn2binpad(s, base + componentSize, Int32(componentSize)) == Int32(componentSize)
        }
        guard ok else { throw ProviderError.signing("ECDSA signature component too large") }
        return raw
    }

    /// 64-byte r||s → DER (for verification with OpenSSL).
    static func derFromRaw(_ raw: [UInt8]) throws(ProviderError) -> [UInt8] {
        guard raw.count % 2 == 0, !raw.isEmpty else { throw ProviderError.signing("r||s has odd length") }
        let half = raw.count / 2
        guard let signature = ECDSA_SIG_new() else { throw ProviderError.signing("ECDSA_SIG_new failed") }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + half }, Int32(half), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            // set0 takes ownership only on success.
            BN_free(r)
            BN_free(s)
            throw ProviderError.signing("cannot build ECDSA signature")
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { throw ProviderError.signing("i2d_ECDSA_SIG failed") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard written == length else { throw ProviderError.signing("i2d_ECDSA_SIG failed") }
        return der
    }
}
