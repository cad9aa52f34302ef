import Foundation
import PushCore
import PushSimulator
import Testing

@testable import PushProviders

@Suite("VAPID signer (RFC 8292)")
struct VAPIDSignerTests {
    /// A clock a test can move.
    final class TestClock: Sendable {
        private let current: Locked<Date>
        init(_ start: Date) { current = Locked(start) }
        var now: Date { current.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    static let start = Date(timeIntervalSince1970: 1_750_000_000.4)

    static func decodeJSON(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("the header is vapid t=<ES256 JWT>, k=<public key>; the JWT verifies and has the right claims")
    func tokenShapeAndSignature() throws {
        let key = DevCredentials.makeAPNsKey()
        let clock = TestClock(Self.start)
        let signer = try VAPIDSigner(
            privateKeyPEM: key.privateKeyPEM, subject: "mailto:ops@example.com", now: { clock.now })
        let header = try signer.authorization(forEndpoint: "https://Push.Example.net:8443/wp/abc?x=1")
        #expect(header.hasPrefix("vapid t="))
        let parts = header.dropFirst("vapid t=".count).components(separatedBy: ", k=")
        #expect(parts.count == 2)
        #expect(parts[1] == signer.publicKeyBase64URL)
        #expect(signer.publicKey.count == 65 && signer.publicKey[0] == 0x04)
        let publicKey = try EVPKey(pem: key.publicKeyPEM, kind: .publicKey)
        // k, as an SPKI PEM, is a key the signature verifies with too.
        let kDER = P256.spkiPrefix + signer.publicKey
        let kPEM = "-----BEGIN PUBLIC KEY-----\n" + Data(kDER).base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        let kKey = try EVPKey(pem: kPEM, kind: .publicKey)

        let jwt = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        #expect(jwt.count == 3)
        let head = try Self.decodeJSON(jwt[0])
        #expect(head["typ"] as? String == "JWT")
        #expect(head["alg"] as? String == "ES256")
        #expect(head.count == 2)
        let claims = try Self.decodeJSON(jwt[1])
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["sub"] as? String == "mailto:ops@example.com")
        #expect(claims["exp"] as? Int == 1_750_000_000 + 12 * 3600)
        let signature = try #require(Base64URL.decode(jwt[2]))
        #expect(signature.count == 64)
        let der = try ECDSASignature.derFromRaw(signature)
        let input = Array("\(jwt[0]).\(jwt[1])".utf8)
        #expect(publicKey.verifySHA256(signature: der, message: input))
        #expect(kKey.verifySHA256(signature: der, message: input))
        #expect(!publicKey.verifySHA256(signature: der, message: input + [0x20]))
    }

    @Test("a token is cached per audience and replaced when less than an hour is left")
    func cacheAndRefresh() throws {
        let clock = TestClock(Self.start)
        let signer = try VAPIDSigner(
            privateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "https://example.com/contact",
            now: { clock.now })
        let first = try signer.authorization(audience: "https://a.example")
        #expect(try signer.authorization(audience: "https://a.example") == first)
        #expect(signer.mintCount == 1)
        let other = try signer.authorization(audience: "https://b.example")
        #expect(other != first)
        #expect(signer.mintCount == 2)
        clock.advance(10 * 3600)  // 2 h left: still reused
        #expect(try signer.authorization(audience: "https://a.example") == first)
        #expect(signer.mintCount == 2)
        clock.advance(3600 + 1)  // under an hour left: a new one
        let refreshed = try signer.authorization(audience: "https://a.example")
        #expect(refreshed != first)
        #expect(signer.mintCount == 3)
        #expect(try signer.authorization(audience: "https://a.example") == refreshed)
        clock.advance(-7200)  // the clock went back before the token's issue time: re-signed
        #expect(try signer.authorization(audience: "https://a.example") != refreshed)
        #expect(signer.mintCount == 4)
    }

    @Test("concurrent callers for one audience share one signature")
    func concurrentShare() async throws {
        let signer = try VAPIDSigner(
            privateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "mailto:a@b.c")
        let headers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try signer.authorization(audience: "https://x.example") } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(headers.count == 1)
        #expect(signer.mintCount == 1)
    }

    @Test("subjects other than mailto: and https:, bad keys and lifetimes are refused at init")
    func initValidation() {
        let pem = DevCredentials.makeAPNsKey().privateKeyPEM
        func kind(_ subject: String, pem: String, lifetime: Duration = .seconds(12 * 3600)) -> String? {
            do throws(WebPushError) {
                _ = try VAPIDSigner(privateKeyPEM: pem, subject: subject, lifetime: lifetime)
                return nil
            } catch {
                return "\(error.kind)"
            }
        }
        #expect(kind("mailto:ops@example.com", pem: pem) == nil)
        #expect(kind("MAILTO:ops@example.com", pem: pem) == nil)
        #expect(kind("https://example.com", pem: pem) == nil)
        for subject in ["", "ops@example.com", "mailto:", "mailto:@x", "mailto:ops@", "http://example.com", "https://",
            "tel:+1234", "urn:x"]
        {
            #expect(kind(subject, pem: pem) == "invalidSubject", "\(subject)")
        }
        #expect(kind("mailto:a@b.c", pem: "not a pem") == "invalidVAPIDKey")
        let rsa = try? DevCredentials.makeServiceAccount(projectID: "p", clientEmail: "e@p", tokenURI: "https://t")
        if let rsa, let json = try? JSONSerialization.jsonObject(with: Data(rsa.json.utf8)) as? [String: Any],
            let rsaPEM = json["private_key"] as? String
        {
            #expect(kind("mailto:a@b.c", pem: rsaPEM) == "invalidVAPIDKey")
        }
        #expect(kind("mailto:a@b.c", pem: pem, lifetime: .seconds(24 * 3600 + 1)) == "invalidParameter")
        #expect(kind("mailto:a@b.c", pem: pem, lifetime: .seconds(1800)) == "invalidParameter")
    }
}
