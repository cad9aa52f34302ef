import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders
import PushSimulator

/// A started simulator with one APNs key and one FCM account, its CA written
/// to a temp file, and an `HTTP2Client` that trusts it: the provider and
/// HTTP/2 client tests run against it.
package struct LiveStack {
    package static let teamID = "TEAM000001"
    package static let keyID = "KEY0000001"
    package static let projectID = "demo-project"
    package static let clientEmail = "push@demo-project.iam.gserviceaccount.com"

    package let simulator: PushSimulator
    package let caPath: String
    package let apnsKey: (privateKeyPEM: String, publicKeyPEM: String)
    package let account: FCMServiceAccount
    package let baseURL: String

    package static func start(
        deadTokens: [String: Date] = [:], configure: (inout SimulatorConfiguration) -> Void = { _ in }
    ) async throws -> LiveStack {
        let apnsKey = DevCredentials.makeAPNsKey()
        let made = try DevCredentials.makeServiceAccount(
            projectID: projectID, clientEmail: clientEmail, tokenURI: "https://127.0.0.1/token")
        let configuration = SimulatorConfiguration(
            host: "127.0.0.1", port: 0, tls: .generate,
            apnsKeys: [SimulatorAPNsKey(keyID: keyID, teamID: teamID, publicKeyPEM: apnsKey.publicKeyPEM)],
            fcmAccounts: [
                SimulatorFCMAccount(
                    clientEmail: clientEmail, privateKeyID: made.privateKeyID, projectID: projectID,
                    publicKeyPEM: made.publicKeyPEM)
            ],
            deadTokens: deadTokens)
        var configured = configuration
        configure(&configured)
        let simulator = PushSimulator(configuration: configured, logger: .test)
        try await simulator.start()
        let caPath = FileManager.default.temporaryDirectory.appendingPathComponent("sim-ca-\(UUID()).pem").path
        try simulator.caCertificatePEM.write(toFile: caPath, atomically: true, encoding: .utf8)
        var account = try FCMServiceAccount(json: Array(made.json.utf8))
        account.tokenURI = simulator.tokenURI  // the port is known only now
        return LiveStack(
            simulator: simulator, caPath: caPath, apnsKey: apnsKey, account: account,
            baseURL: "https://127.0.0.1:\(simulator.port)")
    }

    package func makeHTTPClient(
        maxConnectionsPerHost: Int = 2, configure: (inout HTTPClientConfiguration) -> Void = { _ in }
    ) throws -> HTTP2Client {
        var configuration = HTTPClientConfiguration(caBundlePath: caPath, maxConnectionsPerHost: maxConnectionsPerHost)
        configure(&configuration)
        return try HTTP2Client(configuration: configuration, logger: .test)
    }

    package func makeAPNsClient(
        http: HTTP2Client, policy: ProviderClientPolicy = .apnsDefault,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws -> APNsClient {
        try APNsClient(
            configuration: APNsClientConfiguration(
                baseURL: baseURL, teamID: Self.teamID, keyID: Self.keyID, privateKeyPEM: apnsKey.privateKeyPEM,
                policy: policy),
            http: http, logger: .test, now: now)
    }

    package func makeFCMClient(
        http: HTTP2Client, policy: ProviderClientPolicy = .fcmDefault, now: @escaping @Sendable () -> Date = Date.init
    ) throws -> FCMClient {
        try FCMClient(
            configuration: FCMClientConfiguration(baseURL: baseURL, serviceAccount: account, policy: policy),
            http: http, logger: .test, now: now)
    }

    package func stop() async throws {
        try? FileManager.default.removeItem(atPath: caPath)
        try await simulator.shutdown()
    }

    /// A 64-hex-digit APNs device token.
    package static func deviceToken(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "a", count: 64 - hex.count) + hex
    }

    package static func apnsRequest(token: String, apnsID: String) -> ProviderRequest {
        ProviderRequest(
            provider: .apns, path: "/3/device/\(token)",
            headers: [
                (name: "apns-topic", value: "com.example.app"), (name: "apns-push-type", value: "alert"),
                (name: "apns-priority", value: "10"), (name: "apns-id", value: apnsID),
            ],
            body: Array(#"{"aps":{"alert":{"title":"Hi","body":"Hello"}}}"#.utf8))
    }

    /// A well-formed FCM registration token (>= 20 chars of [A-Za-z0-9_:-]).
    package static func fcmToken(_ n: Int) -> String { "fcm-registration-token:\(n)" }

    package static func fcmRequest(token: String) -> ProviderRequest {
        ProviderRequest(
            provider: .fcm, path: "/v1/projects/\(projectID)/messages:send", headers: [],
            body: Array(#"{"message":{"token":"\#(token)","notification":{"title":"Hi","body":"Hello"}}}"#.utf8))
    }
}

/// Sends like the worker will: a request that failed retriably before any
/// status arrived is re-sent (at most twice). Returns the response and how
/// many re-sends it took. libcurl 7.88 sends RST_STREAM on many completed
/// streams and swift-nio-http2 closes a connection after 200 RSTs in 30 s,
/// so under sustained load the simulator drops a connection now and then.
package func sendResendingUnanswered(
    _ apns: APNsClient, _ request: ProviderRequest
) async throws -> (ProviderResponse, resends: Int) {
    try await resendingUnanswered { try await apns.send(request) }
}

package func resendingUnanswered(
    _ send: () async throws -> ProviderResponse
) async throws -> (ProviderResponse, resends: Int) {
    var resends = 0
    while true {
        do {
            return (try await send(), resends)
        } catch let error as HTTPError where error.isRetriable && !error.statusReceived && resends < 2 {
            resends += 1
        }
    }
}

/// Runs `body` with an APNs client on one connection of one stream whose
/// first answer the simulator holds for `heldFor`: every request sent while
/// it is held waits in the HTTP client for that stream slot. The simulator
/// logs the requests it gets (`stats().requests`, in arrival order).
package func withOneAPNsStreamHeld<T>(
    for heldFor: Duration, _ body: (LiveStack, HTTP2Client, APNsClient) async throws -> T
) async throws -> T {
    try await withLiveStack(configure: {
        $0.scenarios = [
            SimulatorScenario(provider: "apns", fault: .delay(milliseconds: Int(heldFor / .milliseconds(1))), count: 1)
        ]
        $0.requestLog = 1000
    }) { stack in
        let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1) { $0.maxConcurrentStreams = 1 }
        defer { http.shutdown() }
        return try await body(stack, http, try stack.makeAPNsClient(http: http))
    }
}

/// Runs `body` against a fresh stack and always stops the simulator.
package func withLiveStack<T>(
    deadTokens: [String: Date] = [:], configure: (inout SimulatorConfiguration) -> Void = { _ in },
    _ body: (LiveStack) async throws -> T
) async throws -> T {
    let stack = try await LiveStack.start(deadTokens: deadTokens, configure: configure)
    do {
        let result = try await body(stack)
        try await stack.stop()
        return result
    } catch {
        try? await stack.stop()
        throw error
    }
}

extension Logger {
    /// The provider and HTTP/2 tests' logger (`TestEnvironment.logger`).
    package static let test = TestEnvironment.logger("pushfleet.provider.tests")
}
