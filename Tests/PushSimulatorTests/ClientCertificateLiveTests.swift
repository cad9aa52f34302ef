import Foundation
import XCTest

@testable import PushSimulator

/// APNs certificate-based auth over real TLS: the server asks for a client
/// certificate, checks it against the configured CA and answers as Apple does.
final class ClientCertificateLiveTests: XCTestCase {
    func testCertificateVerdictsAreAnsweredAs403() async throws {
        let authority = try DevCredentials.makeClientCertificateAuthority()
        let stranger = try DevCredentials.makeClientCertificateAuthority()
        var configuration = try TestCredentials.get().configuration()
        configuration.apnsEnvironment = .production
        configuration.apnsClientCertificateCAPEM = authority.certificatePEM
        try await LiveSimulator.with(configuration) { live in
            func identity(
                _ name: String, environment: SimulatorAPNsEnvironment?, issuer: (certificatePEM: String, privateKeyPEM: String),
                validFor: TimeInterval = 86_400
            ) throws -> [String] {
                let made = try DevCredentials.makeAPNsClientCertificate(
                    bundleID: TestCredentials.topic, environment: environment, issuerCertificatePEM: issuer.certificatePEM,
                    issuerPrivateKeyPEM: issuer.privateKeyPEM, validFor: validFor)
                return ["--cert", try live.file("\(name).pem", made.certificatePEM), "--key", try live.file("\(name).key", made.privateKeyPEM)]
            }
            func send(_ extra: [String], headers: [String]) async throws -> (code: String, body: String) {
                let bodyFile = live.directory.appendingPathComponent("body-\(UUID().uuidString)").path
                var arguments = [
                    "--silent", "--http2", "--max-time", "20", "--cacert", live.caPath, "--output", bodyFile,
                    "--write-out", "%{http_code}", "--data-binary", #"{"aps":{"alert":"hi"}}"#,
                ]
                for header in headers { arguments += ["--header", header] }
                arguments += extra + [live.url("/3/device/\(deviceToken(0x90))")]
                let code = try await runTool("/usr/bin/curl", arguments).output
                return (code, (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "")
            }
            let plain = ["apns-topic: \(TestCredentials.topic)", "apns-push-type: alert"]
            let universal = try await send(try identity("universal", environment: nil, issuer: authority), headers: plain)
            XCTAssertEqual(universal.code, "200", universal.body)
            let production = try await send(try identity("production", environment: .production, issuer: authority), headers: plain)
            XCTAssertEqual(production.code, "200", production.body)
            let foreign = try await send(try identity("foreign", environment: nil, issuer: stranger), headers: plain)
            XCTAssertEqual(foreign.code, "403")
            XCTAssertEqual(foreign.body, #"{"reason":"BadCertificate"}"#)
            let expired = try await send(try identity("expired", environment: nil, issuer: authority, validFor: -60), headers: plain)
            XCTAssertEqual(expired.body, #"{"reason":"BadCertificate"}"#)
            let sandbox = try await send(try identity("sandbox", environment: .sandbox, issuer: authority), headers: plain)
            XCTAssertEqual(sandbox.code, "403")
            XCTAssertEqual(sandbox.body, #"{"reason":"BadCertificateEnvironment"}"#)
            // The certificate is optional: token auth on the same server still works, and no credential at all is 403.
            let token = try await send([], headers: try LiveSimulator.apnsHeaders())
            XCTAssertEqual(token.code, "200", token.body)
            let none = try await send([], headers: plain)
            XCTAssertEqual(none.body, #"{"reason":"MissingProviderToken"}"#)
            XCTAssertEqual(live.simulator.stats().apnsAccepted, 3)
        }
    }
}
