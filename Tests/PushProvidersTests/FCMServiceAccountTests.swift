import Foundation
import PushHTTP
import PushSimulator
import PushTestSupport
import Testing
@testable import PushProviders

@Suite("FCM service account and RS256 grant assertion")
struct FCMServiceAccountTests {
    static let email = "push@demo-project.iam.gserviceaccount.com"

    static func makeAccount() throws -> (json: String, privateKeyID: String, publicKeyPEM: String) {
        try DevCredentials.makeServiceAccount(
            projectID: "demo-project", clientEmail: email, tokenURI: "https://127.0.0.1:8443/token")
    }

    @Test("parses the console's JSON shape")
    func parses() throws {
        let made = try Self.makeAccount()
        let account = try FCMServiceAccount(json: Array(made.json.utf8))
        #expect(account.type == "service_account")
        #expect(account.projectID == "demo-project")
        #expect(account.privateKeyID == made.privateKeyID)
        #expect(account.clientEmail == Self.email)
        #expect(account.tokenURI == "https://127.0.0.1:8443/token")
        #expect(account.privateKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sa-\(UUID()).json").path
        try made.json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try FCMServiceAccount.load(path: path) == account)
    }

    @Test("missing or wrong fields name the key", arguments: ["private_key", "client_email", "token_uri", "project_id"])
    func missingField(_ field: String) throws {
        let made = try Self.makeAccount()
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(made.json.utf8)) as? [String: Any])
        object.removeValue(forKey: field)
        let json = try JSONSerialization.data(withJSONObject: object)
        #expect {
            try FCMServiceAccount(json: Array(json))
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.kind == .invalidServiceAccount && error.message.contains("\"\(field)\"")
                && !error.isRetriable
        }
    }

    @Test("other malformed inputs")
    func malformed() throws {
        #expect { try FCMServiceAccount(json: Array("not json".utf8)) } throws: {
            ($0 as? ProviderError)?.kind == .invalidServiceAccount
        }
        let made = try Self.makeAccount()
        let wrongType = made.json.replacingOccurrences(of: "\"service_account\"", with: "\"authorized_user\"")
        #expect { try FCMServiceAccount(json: Array(wrongType.utf8)) } throws: {
            ($0 as? ProviderError)?.message.contains("expected \"service_account\"") == true
        }
        #expect { try FCMServiceAccount.load(path: "/nonexistent/sa.json") } throws: {
            ($0 as? ProviderError)?.message.contains("/nonexistent/sa.json") == true
        }
        // A service account whose key is EC, not RSA, is refused up front.
        var account = try FCMServiceAccount(json: Array(made.json.utf8))
        account.privateKey = DevCredentials.makeAPNsKey().privateKeyPEM
        let http = try HTTP2Client(configuration: .init(), logger: .test)
        defer { http.shutdown() }
        #expect { try FCMAccessTokenProvider(account: account, http: http, logger: .test) } throws: {
            ($0 as? ProviderError)?.message.contains("not an RSA key") == true
        }
    }

    @Test("grant assertion: RS256 header, Google's claims, valid signature")
    func assertion() throws {
        let made = try Self.makeAccount()
        let account = try FCMServiceAccount(json: Array(made.json.utf8))
        let http = try HTTP2Client(configuration: .init(), logger: .test)
        defer { http.shutdown() }
        let provider = try FCMAccessTokenProvider(account: account, http: http, logger: .test)
        let jwt = try #require(DecodedJWT(try provider.assertion(issuedAt: 1_700_000_000)))
        #expect(jwt.header["alg"] as? String == "RS256")
        #expect(jwt.header["typ"] as? String == "JWT")
        #expect(jwt.header["kid"] as? String == made.privateKeyID)
        #expect(jwt.claims["iss"] as? String == Self.email)
        #expect(jwt.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(jwt.claims["aud"] as? String == "https://127.0.0.1:8443/token")
        #expect(jwt.claims["iat"] as? Int == 1_700_000_000)
        #expect(jwt.claims["exp"] as? Int == 1_700_003_600)
        #expect(jwt.signature.count == 256)
        #expect(try jwt.verifiesRS256(publicKeyPEM: made.publicKeyPEM))
        #expect(try !jwt.verifiesRS256(publicKeyPEM: Self.makeAccount().publicKeyPEM))
    }

    @Test("retriable classification")
    func retriable() {
        #expect(ProviderError.tokenEndpoint(status: 503, error: nil, description: nil).isRetriable)
        #expect(ProviderError.tokenEndpoint(status: 429, error: nil, description: nil).isRetriable)
        #expect(!ProviderError.tokenEndpoint(status: 400, error: "invalid_grant", description: "x").isRetriable)
        #expect(ProviderError.tokenEndpointTransport(.transfer(code: 7, detail: "", statusReceived: false)).isRetriable)
        #expect(!ProviderError.tokenEndpointTransport(.transfer(code: 60, detail: "", statusReceived: false)).isRetriable)
        #expect(!ProviderError.invalidKey("k").isRetriable)
        let error = ProviderError.tokenEndpoint(status: 400, error: "invalid_grant", description: "Invalid JWT Signature.")
        #expect(error.message == "OAuth token endpoint answered HTTP 400: invalid_grant (Invalid JWT Signature.)")
        #expect(error.file.hasSuffix("FCMServiceAccountTests.swift"))
    }
}
