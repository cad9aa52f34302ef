import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("APNs certificate auth and environments against the simulator", .serialized)
struct APNsCertificateLiveTests {
    static let topic = "com.example.app"

    /// A client certificate for `topic` written to temp files: (certificate, key) paths.
    static func writeIdentity(
        issuer: (certificatePEM: String, privateKeyPEM: String), validFor: TimeInterval = 86_400
    ) throws -> (cert: String, key: String) {
        let made = try DevCredentials.makeAPNsClientCertificate(
            bundleID: topic, environment: nil, issuerCertificatePEM: issuer.certificatePEM,
            issuerPrivateKeyPEM: issuer.privateKeyPEM, validFor: validFor)
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("apns-cert-\(UUID())").path
        try made.certificatePEM.write(toFile: base + ".pem", atomically: true, encoding: .utf8)
        try made.privateKeyPEM.write(toFile: base + ".key", atomically: true, encoding: .utf8)
        return (base + ".pem", base + ".key")
    }

    static func client(_ stack: LiveStack, _ certificate: APNsClientCertificate) throws -> (APNsClient, HTTP2Client) {
        let http = try stack.makeHTTPClient { certificate.apply(to: &$0) }
        let configuration = APNsClientConfiguration(baseURL: stack.baseURL, certificate: certificate)
        return (try APNsClient(configuration: configuration, http: http, logger: .test), http)
    }

    static func request(_ n: Int) -> ProviderRequest {
        LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased())
    }

    @Test("a PEM and a PKCS#12 (with passphrase) client certificate the simulator's CA issued are accepted")
    func acceptedCertificates() async throws {
        let authority = try DevCredentials.makeClientCertificateAuthority()
        try await withLiveStack(configure: { $0.apnsClientCertificateCAPEM = authority.certificatePEM }) { stack in
            let identity = try Self.writeIdentity(issuer: authority)
            let (pem, pemHTTP) = try Self.client(stack, APNsClientCertificate(certificatePath: identity.cert, keyPath: identity.key))
            defer { pemHTTP.shutdown() }
            let response = try await pem.send(Self.request(1))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")

            let p12 = identity.cert + ".p12"
            let export = Process()
            export.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            export.arguments = ["pkcs12", "-export", "-in", identity.cert, "-inkey", identity.key, "-out", p12, "-passout", "pass:s3cret"]
            try export.run()
            export.waitUntilExit()
            try #require(export.terminationStatus == 0)
            let (bundle, bundleHTTP) = try Self.client(
                stack, APNsClientCertificate(certificatePath: p12, format: .pkcs12, passphrase: "s3cret"))
            defer { bundleHTTP.shutdown() }
            #expect(try await bundle.send(Self.request(2)).status == 200)
            #expect(stack.simulator.stats().apnsAccepted == 2)
            #expect(pem.stats().tokenRefreshes == 0)
        }
    }

    @Test("a certificate from another CA, or an expired one: credentialsRejected, not retriable, no breaker failure")
    func rejectedCertificates() async throws {
        let authority = try DevCredentials.makeClientCertificateAuthority()
        let stranger = try DevCredentials.makeClientCertificateAuthority()
        try await withLiveStack(configure: { $0.apnsClientCertificateCAPEM = authority.certificatePEM }) { stack in
            for identity in [try Self.writeIdentity(issuer: stranger), try Self.writeIdentity(issuer: authority, validFor: -60)] {
                let (apns, http) = try Self.client(stack, APNsClientCertificate(certificatePath: identity.cert, keyPath: identity.key))
                defer { http.shutdown() }
                for n in 0..<25 {
                    do {
                        _ = try await apns.send(Self.request(n))
                        Issue.record("expected the certificate to be rejected")
                    } catch let error as ProviderError {
                        #expect(error.kind == .credentialsRejected)
                        #expect(error.providerReason == "BadCertificate")
                        #expect(!error.isRetriable)
                    }
                }
                #expect(apns.circuitState == .closed, "a credential problem says nothing about the host's health")
                #expect(apns.isAcceptingWork)
            }
            #expect(stack.simulator.stats().apnsAccepted == 0)
        }
    }

    @Test("an unreadable certificate file: curl 58, no status, not retriable")
    func unreadableCertificate() async throws {
        try await withLiveStack { stack in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("garbage-\(UUID()).pem").path
            try "not a certificate".write(toFile: path, atomically: true, encoding: .utf8)
            let (apns, http) = try Self.client(stack, APNsClientCertificate(certificatePath: path, keyPath: path))
            defer { http.shutdown() }
            do {
                _ = try await apns.send(Self.request(1))
                Issue.record("expected a TLS setup failure")
            } catch let error as HTTPError {
                #expect(error.curlCode == 58)
                #expect(!error.statusReceived)
                #expect(!error.isRetriable)
            }
            #expect(apns.stats().resentWithoutStatus == 0)
        }
    }

    @Test("sandbox and production hosts chosen per device environment")
    func environments() async throws {
        let sandboxToken = LiveStack.deviceToken(0x5a)
        let productionToken = LiveStack.deviceToken(0x9d)
        let environments: [String: SimulatorAPNsEnvironment] = [sandboxToken: .sandbox, productionToken: .production]
        try await withLiveStack(configure: { $0.apnsEnvironment = .production; $0.tokenEnvironments = environments }) { production in
            try await withLiveStack(configure: { $0.apnsEnvironment = .sandbox; $0.tokenEnvironments = environments }) { sandbox in
                let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("ca-both-\(UUID()).pem").path
                try (production.simulator.caCertificatePEM + "\n" + sandbox.simulator.caCertificatePEM)
                    .write(toFile: bundle, atomically: true, encoding: .utf8)
                let http = try HTTP2Client(configuration: HTTPClientConfiguration(caBundlePath: bundle), logger: .test)
                defer { http.shutdown() }
                let apns = try APNsClient(
                    configuration: APNsClientConfiguration(
                        baseURL: production.baseURL, teamID: LiveStack.teamID, keyID: LiveStack.keyID,
                        privateKeyPEM: production.apnsKey.privateKeyPEM, sandboxBaseURL: sandbox.baseURL),
                    http: http, logger: .test)
                #expect(apns.baseURL(for: .sandbox) == sandbox.baseURL)
                #expect(apns.baseURL(for: nil) == production.baseURL)
                // Each stack has its own key; sign for the right one by using one client per stack's key.
                let sandboxClient = try APNsClient(
                    configuration: APNsClientConfiguration(
                        baseURL: production.baseURL, teamID: LiveStack.teamID, keyID: LiveStack.keyID,
                        privateKeyPEM: sandbox.apnsKey.privateKeyPEM, sandboxBaseURL: sandbox.baseURL),
                    http: http, logger: .test)
                let toSandbox = try await sandboxClient.send(
                    LiveStack.apnsRequest(token: sandboxToken, apnsID: UUID().uuidString.lowercased()), environment: .sandbox)
                #expect(toSandbox.status == 200)
                let toProduction = try await apns.send(
                    LiveStack.apnsRequest(token: productionToken, apnsID: UUID().uuidString.lowercased()), environment: .production)
                #expect(toProduction.status == 200)
                // The wrong host for a token is what Apple answers with BadDeviceToken.
                let wrong = try await apns.send(
                    LiveStack.apnsRequest(token: sandboxToken, apnsID: UUID().uuidString.lowercased()), environment: .production)
                #expect(wrong.status == 400)
                #expect(APNsReason.of(wrong) == "BadDeviceToken")
                #expect(sandbox.simulator.stats().apnsAccepted == 1)
                #expect(production.simulator.stats().apnsAccepted == 1)
            }
        }
    }
}
