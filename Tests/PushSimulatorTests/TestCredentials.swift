import Crypto
import Foundation
import PushCore
import XCTest
import _CryptoExtras

@testable import PushSimulator

/// Keys, accounts and JWT signing for the tests (signed here with swift-crypto,
/// independently of the simulator's own verification code).
struct TestCredentials: Sendable {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "com.example.app"
    static let projectID = "demo-project"
    static let otherProjectID = "other-project"
    static let clientEmail = "pusher@demo-project.iam.gserviceaccount.com"
    static let otherClientEmail = "pusher@other-project.iam.gserviceaccount.com"

    let apnsKey: P256.Signing.PrivateKey
    let apnsPublicPEM: String
    let account: (json: String, privateKeyID: String, publicKeyPEM: String)
    let accountKey: _RSA.Signing.PrivateKey
    let otherAccount: (json: String, privateKeyID: String, publicKeyPEM: String)
    let otherAccountKey: _RSA.Signing.PrivateKey

    struct SetupError: Error, Sendable {
        let message: String
    }

    /// Made once: RSA key generation is slow-ish.
    private static let shared: Result<TestCredentials, SetupError> = {
        do {
            return .success(try TestCredentials())
        } catch {
            return .failure(SetupError(message: "\(error)"))
        }
    }()

    static func get() throws -> TestCredentials {
        try shared.get()
    }

    private init() throws {
        let apns = DevCredentials.makeAPNsKey()
        apnsKey = try P256.Signing.PrivateKey(pemRepresentation: apns.privateKeyPEM)
        apnsPublicPEM = apns.publicKeyPEM
        account = try DevCredentials.makeServiceAccount(
            projectID: Self.projectID, clientEmail: Self.clientEmail, tokenURI: "https://127.0.0.1:0/token")
        accountKey = try Self.privateKey(ofServiceAccount: account.json)
        otherAccount = try DevCredentials.makeServiceAccount(
            projectID: Self.otherProjectID, clientEmail: Self.otherClientEmail, tokenURI: "https://127.0.0.1:0/token")
        otherAccountKey = try Self.privateKey(ofServiceAccount: otherAccount.json)
    }

    static func privateKey(ofServiceAccount json: String) throws -> _RSA.Signing.PrivateKey {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let pem = try XCTUnwrap(object?["private_key"] as? String)
        return try _RSA.Signing.PrivateKey(pemRepresentation: pem)
    }

    func configuration(topics: [String] = [Self.topic], fastMode: Bool = false) -> SimulatorConfiguration {
        SimulatorConfiguration(
            apnsKeys: [.init(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: apnsPublicPEM, topics: topics)],
            fcmAccounts: [
                .init(
                    clientEmail: Self.clientEmail, privateKeyID: account.privateKeyID, projectID: Self.projectID,
                    publicKeyPEM: account.publicKeyPEM),
                .init(
                    clientEmail: Self.otherClientEmail, privateKeyID: otherAccount.privateKeyID,
                    projectID: Self.otherProjectID, publicKeyPEM: otherAccount.publicKeyPEM),
            ],
            fastMode: fastMode)
    }

    // MARK: JWTs

    static func segment(_ object: [String: Any]) throws -> String {
        Base64URL.encode(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// An APNs provider token signed with `key` (default: the configured key).
    func providerToken(
        issuedAt: Date, keyID: String = Self.keyID, teamID: String = Self.teamID, alg: String = "ES256",
        key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let input =
            try Self.segment(["alg": alg, "kid": keyID])
            + "." + Self.segment(["iss": teamID, "iat": Int(issuedAt.timeIntervalSince1970)])
        let signature = try (key ?? apnsKey).signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// A JWT bearer assertion for the token endpoint.
    func assertion(
        issuedAt: Date, lifetime: TimeInterval = 3600, keyID: String? = nil, issuer: String = Self.clientEmail,
        audience: String = "https://127.0.0.1:0/token",
        scope: String = "https://www.googleapis.com/auth/firebase.messaging", key: _RSA.Signing.PrivateKey? = nil
    ) throws -> String {
        let iat = Int(issuedAt.timeIntervalSince1970)
        let input =
            try Self.segment(["alg": "RS256", "typ": "JWT", "kid": keyID ?? account.privateKeyID])
            + "."
            + Self.segment(["iss": issuer, "scope": scope, "aud": audience, "iat": iat, "exp": iat + Int(lifetime)])
        let signature = try (key ?? accountKey).signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    static func tokenRequestBody(assertion: String) -> [UInt8] {
        Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
    }
}

/// A 64-hex-digit APNs device token, distinct per `seed`.
func deviceToken(_ seed: UInt8 = 1) -> String {
    String(repeating: String(format: "%02x", seed), count: 32)
}

/// Decodes a JSON response body for assertions.
func json(_ response: SimulatorResponse) throws -> [String: Any] {
    try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], response.bodyText)
}
