import Foundation
import PushCore
import Testing

@testable import PushProviders

/// RFC 8291 Appendix A and RFC 8188 §3.1, byte for byte, plus round trips and
/// every validation error of the encryptor.
@Suite("Web Push encryption (RFC 8291, RFC 8188)")
struct WebPushEncryptionTests {
    /// RFC 8291 §5 and Appendix A (whitespace removed).
    enum RFC8291 {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
        static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
        static let cek = "oIhVW04MRdy2XN9CiKLxTg"
        static let nonce = "4h_95klXJ5E_qnoN"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    /// RFC 8188 §3.1: one record, rs 4096, no keyid.
    enum RFC8188 {
        static let plaintext = "I am the walrus"
        static let ikm = "yqdlZ-tYemfogSmv7Ws5PQ"
        static let salt = "I1BsxtFttlv3u_Oo94xnmw"
        static let body = "I1BsxtFttlv3u_Oo94xnmwAAEAAA-NAVub2qFgBEuQKRapoZu-IxkIva3MEB1PD-ly8Thjg"
    }

    static func bytes(_ base64url: String) -> [UInt8] {
        Base64URL.decode(base64url) ?? []
    }

    static func rfcKeys() throws -> WebPushSubscriptionKeys {
        try WebPushSubscriptionKeys(p256dh: RFC8291.uaPublic, auth: RFC8291.authSecret)
    }

    @Test("RFC 8291 Appendix A: the example's keys and salt give the exact body")
    func rfc8291Encrypt() throws {
        let serverKey = try WebPushECDHKey(privateScalar: Self.bytes(RFC8291.asPrivate))
        #expect(serverKey.publicKey == Self.bytes(RFC8291.asPublic))
        let body = try WebPushEncryption.encrypt(
            Array(RFC8291.plaintext.utf8), for: Self.rfcKeys(), ephemeralKey: serverKey,
            salt: Self.bytes(RFC8291.salt))
        #expect(Base64URL.encode(body) == RFC8291.body)
        #expect(body.count == 144)
    }

    @Test("RFC 8291 Appendix A: intermediate values (ECDH secret, IKM, CEK, nonce)")
    func rfc8291Intermediates() throws {
        let serverKey = try WebPushECDHKey(privateScalar: Self.bytes(RFC8291.asPrivate))
        let userAgent = try P256PublicKey(uncompressed: Self.bytes(RFC8291.uaPublic), field: "ua")
        let secret = try serverKey.sharedSecret(with: userAgent)
        #expect(secret == Self.bytes(RFC8291.ecdhSecret))
        let ikm = try WebPushEncryption.inputKeyingMaterial(
            ecdhSecret: secret, authSecret: Self.bytes(RFC8291.authSecret),
            userAgentPublic: Self.bytes(RFC8291.uaPublic), serverPublic: serverKey.publicKey)
        #expect(ikm == Self.bytes(RFC8291.ikm))
        let (cek, nonce) = try AES128GCMContentCoding.keys(ikm: ikm, salt: Self.bytes(RFC8291.salt))
        #expect(cek == Self.bytes(RFC8291.cek))
        #expect(nonce == Self.bytes(RFC8291.nonce))
    }

    @Test("RFC 8291 Appendix A: the user agent's key decrypts the example body")
    func rfc8291Decrypt() throws {
        let userAgent = try WebPushECDHKey(privateScalar: Self.bytes(RFC8291.uaPrivate))
        #expect(userAgent.publicKey == Self.bytes(RFC8291.uaPublic))
        let decryptor = try WebPushDecryptor(privateKey: userAgent, authSecret: Self.bytes(RFC8291.authSecret))
        let plaintext = try decryptor.decrypt(Self.bytes(RFC8291.body))
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)
    }

    @Test("RFC 8188 §3.1: the single-record example decrypts, and encrypting it gives the same bytes")
    func rfc8188Example() throws {
        let body = Self.bytes(RFC8188.body)
        let header = try AES128GCMContentCoding.parseHeader(body)
        #expect(header.recordSize == 4096)
        #expect(header.keyID.isEmpty)
        #expect(header.salt == Self.bytes(RFC8188.salt))
        let plaintext = try AES128GCMContentCoding.decrypt(body, ikm: Self.bytes(RFC8188.ikm))
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8188.plaintext)
        let again = try AES128GCMContentCoding.encrypt(
            Array(RFC8188.plaintext.utf8), ikm: Self.bytes(RFC8188.ikm), salt: Self.bytes(RFC8188.salt), keyID: [],
            recordSize: 4096)
        #expect(again == body)
    }

    @Test("round trip with random keys, sizes 0 to the limit, with and without padding")
    func roundTrip() throws {
        let userAgent = try WebPushECDHKey.generate()
        let auth = WebPushPrimitives.randomBytes(16)
        let keys = try WebPushSubscriptionKeys(p256dh: userAgent.publicKey, auth: auth)
        let decryptor = try WebPushDecryptor(privateKey: userAgent, authSecret: auth)
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 15, 16, 17, 1000, 3992, 3993] {
            let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let body = try WebPushEncryption.encrypt(plaintext, for: keys)
            #expect(body.count == 86 + size + 1 + 16)
            #expect(body.count <= WebPushEncryption.maxBodySize)
            #expect(try decryptor.decrypt(body) == plaintext)
        }
        let padded = try WebPushEncryption.encrypt(Array("hi".utf8), for: keys, padding: 100)
        #expect(padded.count == 86 + 2 + 1 + 100 + 16)
        #expect(try decryptor.decrypt(padded) == Array("hi".utf8))
        // Fresh ephemeral key and salt per message.
        let first = try WebPushEncryption.encrypt(Array("same".utf8), for: keys)
        let second = try WebPushEncryption.encrypt(Array("same".utf8), for: keys)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
    }

    @Test("the size rule: 3993 bytes of plaintext and padding fit in 4096, one more does not")
    func sizeLimit() throws {
        #expect(WebPushEncryption.maxPlaintextSize == 3993)
        let keys = try Self.rfcKeys()
        let body = try WebPushEncryption.encrypt([UInt8](repeating: 0x41, count: 3993), for: keys)
        #expect(body.count == 4096)
        #expect(throws: WebPushError.self) { try WebPushEncryption.encrypt([UInt8](repeating: 0, count: 3994), for: keys) }
        do throws(WebPushError) {
            _ = try WebPushEncryption.encrypt([UInt8](repeating: 0, count: 3000), for: keys, padding: 994)
            Issue.record("expected plaintextTooLarge")
        } catch {
            #expect(error.kind == .plaintextTooLarge(size: 3994, limit: 3993))
            #expect(error.field == "plaintext")
        }
    }

    @Test("subscription keys: bad base64url, wrong lengths, a point off the curve are each named")
    func keyValidation() throws {
        func failure(_ p256dh: String, _ auth: String) -> String? {
            do throws(WebPushError) {
                _ = try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth)
                return nil
            } catch {
                return "\(error.kind) \(error.field ?? "-")"
            }
        }
        let good = RFC8291.uaPublic
        #expect(failure(good, RFC8291.authSecret) == nil)
        #expect(failure(good + "=", RFC8291.authSecret + "==") == nil)  // padded base64url is fine
        #expect(failure(good + "==", RFC8291.authSecret) == "invalidBase64URL keys.p256dh")  // wrong padding
        #expect(failure("BCVxsr7N+eNg/Rqv", RFC8291.authSecret) == "invalidBase64URL keys.p256dh")
        #expect(failure(good, "BTBZMqHH6r4Tts7J_aSIg!") == "invalidBase64URL keys.auth")
        #expect(failure(good, "BTBZMqHH6r4Tts7J_aSI") == "invalidAuthSecret keys.auth")  // 15 bytes
        #expect(failure(String(good.dropLast(4)), RFC8291.authSecret) == "invalidP256DH keys.p256dh")  // 62 bytes
        // A 33-byte compressed point is not accepted.
        var compressed = Self.bytes(good).prefix(33).map { $0 }
        compressed[0] = 0x02
        #expect(failure(Base64URL.encode(compressed), RFC8291.authSecret) == "invalidP256DH keys.p256dh")
        // 65 bytes starting 0x04 but not on the curve (y changed).
        var offCurve = Self.bytes(good)
        offCurve[64] ^= 0x01
        #expect(failure(Base64URL.encode(offCurve), RFC8291.authSecret) == "invalidP256DH keys.p256dh")
        // Wrong prefix byte.
        var wrongPrefix = Self.bytes(good)
        wrongPrefix[0] = 0x05
        #expect(failure(Base64URL.encode(wrongPrefix), RFC8291.authSecret) == "invalidP256DH keys.p256dh")
    }

    @Test("a private scalar of zero or at least the group order is refused")
    func privateScalarRange() {
        #expect(throws: WebPushError.self) { try WebPushECDHKey(privateScalar: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: WebPushError.self) { try WebPushECDHKey(privateScalar: P256.order) }
        #expect(throws: WebPushError.self) { try WebPushECDHKey(privateScalar: [1]) }
    }

    @Test("decryption refuses an altered tag, a wrong delimiter, a wrong key and a second record")
    func decryptionFailures() throws {
        let userAgent = try WebPushECDHKey(privateScalar: Self.bytes(RFC8291.uaPrivate))
        let decryptor = try WebPushDecryptor(privateKey: userAgent, authSecret: Self.bytes(RFC8291.authSecret))
        let body = Self.bytes(RFC8291.body)
        func failure(_ body: [UInt8], with decryptor: WebPushDecryptor) -> WebPushError.Kind? {
            do throws(WebPushError) {
                _ = try decryptor.decrypt(body)
                return nil
            } catch {
                return error.kind
            }
        }
        var altered = body
        altered[altered.count - 1] ^= 0x01
        #expect(failure(altered, with: decryptor) == .decryptionFailed)
        #expect(failure(Array(body.prefix(20)), with: decryptor) == .decryptionFailed)
        #expect(failure(Array(body.prefix(100)), with: decryptor) == .decryptionFailed)
        let stranger = try WebPushDecryptor(
            privateKey: WebPushECDHKey.generate(), authSecret: Self.bytes(RFC8291.authSecret))
        #expect(failure(body, with: stranger) == .decryptionFailed)
        let wrongAuth = try WebPushDecryptor(privateKey: userAgent, authSecret: [UInt8](repeating: 7, count: 16))
        #expect(failure(body, with: wrongAuth) == .decryptionFailed)

        // A record whose delimiter is 0x01 (not the last record) must be discarded.
        let ikm = Self.bytes(RFC8188.ikm)
        let salt = Self.bytes(RFC8188.salt)
        let (cek, nonce) = try AES128GCMContentCoding.keys(ikm: ikm, salt: salt)
        let sealed = try WebPushPrimitives.seal(key: cek, nonce: nonce, plaintext: Array("x".utf8) + [0x01])
        let notLast = salt + [0, 0, 0x10, 0, 0] + sealed
        #expect(throws: WebPushError.self) { try AES128GCMContentCoding.decrypt(notLast, ikm: ikm) }
        // Only padding, no delimiter.
        let allZero = salt + [0, 0, 0x10, 0, 0] + (try WebPushPrimitives.seal(key: cek, nonce: nonce, plaintext: [0, 0]))
        #expect(throws: WebPushError.self) { try AES128GCMContentCoding.decrypt(allZero, ikm: ikm) }
        // More bytes than one record of rs = 18 holds.
        let twoRecords = salt + [0, 0, 0, 18, 0] + [UInt8](repeating: 0, count: 40)
        #expect(throws: WebPushError.self) { try AES128GCMContentCoding.decrypt(twoRecords, ikm: ikm) }
    }
}
