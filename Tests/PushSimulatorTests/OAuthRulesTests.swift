import Foundation
import XCTest
import _CryptoExtras

@testable import PushSimulator

final class OAuthRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    private func tokenRequest(_ assertion: String) -> SimulatorRequest {
        SimulatorRequest(
            method: "POST", path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
            body: TestCredentials.tokenRequestBody(assertion: assertion))
    }

    private func assertError(
        _ response: SimulatorResponse, _ error: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(response.status, 400, response.bodyText, file: file, line: line)
        let body = try json(response)
        XCTAssertEqual(body["error"] as? String, error, file: file, line: line)
        XCTAssertNotNil(body["error_description"] as? String, file: file, line: line)
    }

    func testIssuesAccessToken() throws {
        let credentials = try TestCredentials.get()
        let rules = try SimulatorRules(configuration: credentials.configuration())
        let response = rules.respond(to: tokenRequest(try credentials.assertion(issuedAt: now)), now: now)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let body = try json(response)
        XCTAssertEqual(body["token_type"] as? String, "Bearer")
        XCTAssertEqual(body["expires_in"] as? Int, 3599)
        XCTAssertFalse((body["access_token"] as? String ?? "").isEmpty)
        XCTAssertEqual(rules.stats().tokensIssued, 1)
        XCTAssertEqual(rules.stats().count("oauth", 200, "OK"), 1)
    }

    func testServiceAccountJSONHasGoogleShape() throws {
        let credentials = try TestCredentials.get()
        let object = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(credentials.account.json.utf8)) as? [String: String])
        XCTAssertEqual(object["type"], "service_account")
        XCTAssertEqual(object["project_id"], TestCredentials.projectID)
        XCTAssertEqual(object["private_key_id"], credentials.account.privateKeyID)
        XCTAssertEqual(object["client_email"], TestCredentials.clientEmail)
        XCTAssertEqual(object["token_uri"], "https://127.0.0.1:0/token")
        XCTAssertTrue(object["private_key"]?.hasPrefix("-----BEGIN PRIVATE KEY-----\n") ?? false)
        for key in ["client_id", "auth_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"] {
            XCTAssertNotNil(object[key], key)
        }
        XCTAssertTrue(DevCredentials.makeAPNsKey().privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertTrue(credentials.apnsPublicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
    }

    func testRejectsBadAssertions() throws {
        let credentials = try TestCredentials.get()
        let rules = try SimulatorRules(configuration: credentials.configuration())
        rules.serverPort = 8443
        let audience = "https://127.0.0.1:8443/token"
        let cases: [(String, String)] = [
            (try credentials.assertion(issuedAt: now, audience: audience, key: credentials.otherAccountKey), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, keyID: "0000", audience: audience), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, issuer: "someone@else.com", audience: audience), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, audience: "https://127.0.0.1:9999/token"), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, audience: "https://127.0.0.1:8443/oauth2"), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, lifetime: 3601, audience: audience), "invalid_grant"),
            (try credentials.assertion(issuedAt: now.addingTimeInterval(-4000), audience: audience), "invalid_grant"),
            (try credentials.assertion(issuedAt: now, audience: audience, scope: "https://www.googleapis.com/auth/cloud-platform"), "invalid_scope"),
            ("garbage", "invalid_grant"),
        ]
        for (assertion, error) in cases {
            try assertError(rules.respond(to: tokenRequest(assertion), now: now), error)
        }
        XCTAssertEqual(
            rules.respond(to: tokenRequest(try credentials.assertion(issuedAt: now, audience: audience)), now: now).status,
            200)
        let badGrant = SimulatorRequest(method: "POST", path: "/token", body: Array("grant_type=password".utf8))
        try assertError(rules.respond(to: badGrant, now: now), "unsupported_grant_type")
        XCTAssertEqual(rules.stats().tokensIssued, 1)
        XCTAssertEqual(rules.stats().count("oauth", 400, "invalid_grant"), 8)
    }
}
