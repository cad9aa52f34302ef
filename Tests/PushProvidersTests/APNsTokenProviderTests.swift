import Foundation
import PushCore
import PushSimulator
import Testing
@testable import PushProviders

@Suite("APNs provider token (ES256 JWT)")
struct APNsTokenProviderTests {
    let key = DevCredentials.makeAPNsKey()

    @Test("header, claims and a signature that verifies with the public key")
    func shapeAndSignature() throws {
        let clock = ManualClock()
        let provider = try APNsTokenProvider(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: key.privateKeyPEM, now: clock.closure)
        let token = try provider.currentToken()
        #expect(!token.contains("="))
        let jwt = try #require(DecodedJWT(token))
        #expect(jwt.header.count == 2)
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.header["kid"] as? String == "KEY1234567")
        #expect(jwt.claims.count == 2)
        #expect(jwt.claims["iss"] as? String == "TEAM123456")
        #expect(jwt.claims["iat"] as? Int == 1_700_000_000)
        #expect(jwt.signature.count == 64)
        #expect(try jwt.verifiesES256(publicKeyPEM: key.publicKeyPEM))

        // A different key's public half must not verify it; nor a tampered input.
        let other = DevCredentials.makeAPNsKey()
        #expect(try !jwt.verifiesES256(publicKeyPEM: other.publicKeyPEM))
        var tampered = jwt
        tampered.signingInput += "x"
        #expect(try !tampered.verifiesES256(publicKeyPEM: key.publicKeyPEM))
    }

    @Test("cached until the refresh interval, then re-signed with a new iat")
    func cachingAndRefresh() throws {
        let clock = ManualClock()
        let provider = try APNsTokenProvider(
            teamID: "T", keyID: "K", privateKeyPEM: key.privateKeyPEM, refreshInterval: .seconds(3000),
            now: clock.closure)
        let first = try provider.currentToken()
        clock.advance(seconds: 2999)
        #expect(try provider.currentToken() == first)
        clock.advance(seconds: 1)
        let second = try provider.currentToken()
        #expect(second != first)
        #expect(DecodedJWT(second)?.claims["iat"] as? Int == 1_700_003_000)
        #expect(try provider.currentToken() == second)

        provider.invalidate(ifCurrent: first)  // stale: ignored
        #expect(try provider.currentToken() == second)
        provider.invalidate()
        let third = try provider.currentToken()
        #expect(third != second)
        #expect(try DecodedJWT(third)?.verifiesES256(publicKeyPEM: key.publicKeyPEM) == true)

        clock.advance(seconds: -60)  // clock went backwards: re-sign rather than use a future iat
        #expect(try provider.currentToken() != third)
    }

    @Test("concurrent callers share one token")
    func concurrentCallers() async throws {
        let provider = try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: key.privateKeyPEM)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 { group.addTask { try provider.currentToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
    }

    @Test("keys that are not P-256 private keys are rejected with a clear error")
    func badKeys() throws {
        #expect {
            try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: "not a key")
        } throws: { error in
            (error as? ProviderError)?.kind == .invalidKey
                && (error as? ProviderError)?.message.contains("cannot read the PEM private key") == true
                && (error as? ProviderError)?.isRetriable == false
        }
        #expect {
            try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: key.publicKeyPEM)
        } throws: { ($0 as? ProviderError)?.kind == .invalidKey }
        let account = try DevCredentials.makeServiceAccount(
            projectID: "p", clientEmail: "a@p.iam.gserviceaccount.com", tokenURI: "https://localhost/token")
        let rsaPEM = try FCMServiceAccount(json: Array(account.json.utf8)).privateKey
        #expect {
            try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: rsaPEM)
        } throws: { ($0 as? ProviderError)?.message.contains("not a P-256 EC private key") == true }
        #expect {
            try APNsTokenProvider(teamID: "", keyID: "K", privateKeyPEM: key.privateKeyPEM)
        } throws: { ($0 as? ProviderError)?.kind == .invalidKey }
    }

    @Test("base64url and DER <-> r||s round trips")
    func encodings() throws {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) % 256) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        var raw = [UInt8](repeating: 0, count: 64)
        raw[5] = 1  // leading zero bytes in r must survive
        raw[63] = 9
        #expect(try ECDSASignature.rawFromDER(ECDSASignature.derFromRaw(raw)) == raw)
        #expect(JWT.jsonObject([("a", .string("q\"\\\n")), ("b", .int(-3))]) == #"{"a":"q\"\\\n","b":-3}"#)
    }
}
