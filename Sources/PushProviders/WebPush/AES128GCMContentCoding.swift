/// The `aes128gcm` HTTP content coding (RFC 8188), restricted to what Web Push
/// uses: one record (RFC 8291 §4).
///
/// Body = header || record. Header (RFC 8188 §2.1) = salt (16) || rs (uint32,
/// big-endian) || idlen (1) || keyid (idlen). Keys (§2.2, §2.3):
/// PRK = HKDF-Extract(salt, IKM); CEK = HKDF-Expand(PRK, "Content-Encoding:
/// aes128gcm" || 0x00, 16); NONCE = HKDF-Expand(PRK, "Content-Encoding: nonce"
/// || 0x00, 12) (XOR the sequence number, 0 for the only record). The record is
/// AES-128-GCM(plaintext || 0x02 || zero padding): 0x02 marks the last record.
public enum AES128GCMContentCoding {
    /// A parsed content-coding header.
    public struct Header: Sendable, Equatable {
        public var salt: [UInt8]
        public var recordSize: UInt32
        public var keyID: [UInt8]
        /// Bytes before the first record: 21 + keyid length.
        public var length: Int { 21 + keyID.count }
    }

    static let cekInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
    static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]

    /// Encrypts `plaintext` as one record followed by `padding` zero bytes.
    /// The record (plaintext + delimiter + padding + 16-byte tag) must fit in `recordSize`.
    public static func encrypt(
        _ plaintext: [UInt8], ikm: [UInt8], salt: [UInt8], keyID: [UInt8], recordSize: UInt32, padding: Int = 0
    ) throws(WebPushError) -> [UInt8] {
        guard salt.count == 16 else { throw WebPushError.invalid(.invalidParameter, field: "salt", "must be 16 bytes") }
        guard keyID.count <= 255 else { throw WebPushError.invalid(.invalidParameter, field: "keyid", "longer than 255 bytes") }
        guard padding >= 0 else { throw WebPushError.invalid(.invalidParameter, field: "padding", "must be ≥ 0") }
        let recordLength = plaintext.count + 1 + padding + WebPushPrimitives.tagSize
        guard recordLength <= Int(recordSize) else {
            throw WebPushError.invalid(
                .plaintextTooLarge(size: plaintext.count + padding, limit: Int(recordSize) - 1 - WebPushPrimitives.tagSize),
                field: "plaintext", "one record of \(recordSize) bytes cannot hold it")
        }
        let (cek, nonce) = try keys(ikm: ikm, salt: salt)
        var record = plaintext
        record.reserveCapacity(plaintext.count + 1 + padding)
        record.append(0x02)
        record.append(contentsOf: repeatElement(0, count: padding))
        var body = salt
        body.append(contentsOf: [
            UInt8(truncatingIfNeeded: recordSize >> 24), UInt8(truncatingIfNeeded: recordSize >> 16),
            UInt8(truncatingIfNeeded: recordSize >> 8), UInt8(truncatingIfNeeded: recordSize),
        ])
        body.append(UInt8(keyID.count))
        body.append(contentsOf: keyID)
        body.append(contentsOf: try WebPushPrimitives.seal(key: cek, nonce: nonce, plaintext: record))
        return body
    }

    /// Reads the header; throws `.decryptionFailed` if the body is shorter than it.
    public static func parseHeader(_ body: [UInt8]) throws(WebPushError) -> Header {
        guard body.count >= 21 else { throw WebPushError.decryption("body shorter than the 21-byte header") }
        let recordSize = body[16..<20].reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        let idLength = Int(body[20])
        guard body.count >= 21 + idLength else { throw WebPushError.decryption("body shorter than its keyid") }
        return Header(salt: Array(body[0..<16]), recordSize: recordSize, keyID: Array(body[21..<(21 + idLength)]))
    }

    /// Decrypts a single-record body with `ikm`; checks the record size and the
    /// 0x02 delimiter (anything else means the message must be discarded, RFC 8291 §4).
    public static func decrypt(_ body: [UInt8], ikm: [UInt8]) throws(WebPushError) -> [UInt8] {
        let header = try parseHeader(body)
        // rs must leave room for at least one byte of content after the tag (RFC 8188 §2.1: rs ≥ 18).
        guard header.recordSize >= 18 else { throw WebPushError.decryption("record size \(header.recordSize) < 18") }
        let sealed = body[header.length...]
        guard sealed.count > WebPushPrimitives.tagSize else { throw WebPushError.decryption("no record after the header") }
        guard sealed.count <= Int(header.recordSize) else {
            throw WebPushError.decryption("more than one record (\(sealed.count) bytes, rs \(header.recordSize))")
        }
        let (cek, nonce) = try keys(ikm: ikm, salt: header.salt)
        let padded = try WebPushPrimitives.open(key: cek, nonce: nonce, sealed: sealed)
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }) else {
            throw WebPushError.decryption("the record has no padding delimiter")
        }
        guard padded[delimiter] == 0x02 else {
            throw WebPushError.decryption("padding delimiter is 0x\(String(padded[delimiter], radix: 16)), not 0x02")
        }
        return Array(padded[..<delimiter])
    }

    /// (CEK, NONCE) for one salt and input keying material.
    static func keys(ikm: [UInt8], salt: [UInt8]) throws(WebPushError) -> (cek: [UInt8], nonce: [UInt8]) {
        let prk = try WebPushPrimitives.hmacSHA256(key: salt, data: ikm)
        let cek = try WebPushPrimitives.hmacSHA256(key: prk, data: cekInfo + [0x01]).prefix(16)
        let nonce = try WebPushPrimitives.hmacSHA256(key: prk, data: nonceInfo + [0x01]).prefix(12)
        return (Array(cek), Array(nonce))
    }
}
