import COpenSSL

/// The symmetric primitives of RFC 8188 / RFC 8291 over OpenSSL:
/// HMAC-SHA-256, HKDF (RFC 5869) and AES-128-GCM with a 16-byte tag.
enum WebPushPrimitives {
    static let tagSize = 16

    static func hmacSHA256(key: [UInt8], data: [UInt8]) throws(WebPushError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let done = EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, key, key.count, data, data.count, &out, out.count, &length)
        guard done != nil, length == 32 else { throw WebPushError.crypto("HMAC-SHA-256 failed") }
        return out
    }

    /// HKDF-SHA-256 with one expand block: `length` ≤ 32 bytes.
    static func hkdf(salt: [UInt8], ikm: [UInt8], info: [UInt8], length: Int) throws(WebPushError) -> [UInt8] {
        let prk = try hmacSHA256(key: salt, data: ikm)
        let block = try hmacSHA256(key: prk, data: info + [0x01])
        return Array(block.prefix(length))
    }

    /// AES-128-GCM: ciphertext || 16-byte tag.
    static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) throws(WebPushError) -> [UInt8] {
        guard key.count == 16, nonce.count == 12, let count = Int32(exactly: plaintext.count) else {
            throw WebPushError.crypto("AES-128-GCM: bad key, nonce or length")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw WebPushError.crypto("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1 else {
            throw WebPushError.crypto("EVP_EncryptInit_ex failed")
        }
        // Room for the tag too; GCM writes exactly as many bytes as it reads.
        var out = [UInt8](repeating: 0, count: plaintext.count + tagSize)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress,
                EVP_EncryptUpdate(context, base, &written, plaintext, count) == 1,
                Int(written) == plaintext.count,
                EVP_EncryptFinal_ex(context, base + Int(written), &finalWritten) == 1, finalWritten == 0
            else { return false }
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), base + plaintext.count) == 1
        }
        guard ok else { throw WebPushError.crypto("AES-128-GCM encryption failed") }
        return out
    }

    /// Opens ciphertext || tag; throws `.decryptionFailed` when the tag does not verify.
    static func open(key: [UInt8], nonce: [UInt8], sealed: ArraySlice<UInt8>) throws(WebPushError) -> [UInt8] {
        guard key.count == 16, nonce.count == 12, sealed.count >= tagSize,
            let count = Int32(exactly: sealed.count - tagSize)
        else { throw WebPushError.decryption("AES-128-GCM: record shorter than its tag") }
        guard let context = EVP_CIPHER_CTX_new() else { throw WebPushError.crypto("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_DecryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1 else {
            throw WebPushError.crypto("EVP_DecryptInit_ex failed")
        }
        let ciphertext = Array(sealed.dropLast(tagSize))
        var tag = Array(sealed.suffix(tagSize))
        var out = [UInt8](repeating: 0, count: ciphertext.count + tagSize)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress,
                EVP_DecryptUpdate(context, base, &written, ciphertext, count) == 1,
                Int(written) == ciphertext.count,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), &tag) == 1
            else { return false }
            return EVP_DecryptFinal_ex(context, base + Int(written), &finalWritten) == 1
        }
        guard ok else { throw WebPushError.decryption("AES-128-GCM authentication failed (wrong key or altered body)") }
        return Array(out.prefix(ciphertext.count))
    }

    /// `count` bytes from the system's cryptographic generator (getrandom on Linux).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
