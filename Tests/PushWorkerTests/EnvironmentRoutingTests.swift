import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// A device registered in the APNs sandbox goes to the app's sandbox host,
/// everything else to production. Two simulators play the two hosts and know
/// each token's environment: a token sent to the wrong host gets Apple's
/// `400 BadDeviceToken`, so only correct routing ends `accepted`.
final class EnvironmentRoutingTests: XCTestCase {
    static let app = "com.example.env"
    static let teamID = "TEAM0000EN"
    static let keyID = "KEYENV0001"

    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    func testSandboxDevicesGoToTheSandboxHostAndTheRestToProduction() async throws {
        let sandboxToken = Self.token(1), productionToken = Self.token(2), unknownToken = Self.token(3)
        let userSandboxToken = Self.token(4), userProductionToken = Self.token(5)
        let environments: [String: SimulatorAPNsEnvironment] = [
            sandboxToken: .sandbox, userSandboxToken: .sandbox,
            productionToken: .production, unknownToken: .production, userProductionToken: .production,
        ]
        let key = DevCredentials.makeAPNsKey()
        func simulator(_ environment: SimulatorAPNsEnvironment) async throws -> PushSimulator {
            let simulator = PushSimulator(
                configuration: SimulatorConfiguration(
                    apnsKeys: [SimulatorAPNsKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: key.publicKeyPEM)],
                    apnsEnvironment: environment, tokenEnvironments: environments),
                logger: MigratedDatabase.logger)
            try await simulator.start()
            return simulator
        }
        let production = try await simulator(.production)
        let sandbox = try await simulator(.sandbox)
        let dir = NSTemporaryDirectory() + "pushfleet-env-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let caPath = dir + "/ca.pem", keyPath = dir + "/AuthKey.p8"
        try (production.caCertificatePEM + "\n" + sandbox.caCertificatePEM).write(toFile: caPath, atomically: true, encoding: .utf8)
        try key.privateKeyPEM.write(toFile: keyPath, atomically: true, encoding: .utf8)

        var configuration = WorkerConfiguration()
        configuration.tls.caBundlePath = caPath
        var apns = WorkerConfiguration.APNs(topic: Self.app, teamID: Self.teamID, keyID: Self.keyID, keyPath: keyPath,
                                            baseURL: "https://127.0.0.1:\(production.port)")
        apns.sandboxBaseURL = "https://127.0.0.1:\(sandbox.port)"
        configuration.apps[Self.app] = .init(apns: apns, fcm: nil)
        let router = try ProviderRouter(configuration: configuration, logger: MigratedDatabase.logger)

        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        let store = WorkerStores(pool: pool, logger: MigratedDatabase.logger)
        let registered = Date().addingTimeInterval(-60)
        func register(_ token: String, _ environment: String, user: String?) -> DeviceEvent {
            DeviceEvent(app: Self.app, platform: .ios, token: token, userID: user, environment: environment,
                        action: .register, at: registered)
        }
        try await store.writer.write(BatchOutcome(deviceUpdates: [
            register(sandboxToken, "sandbox", user: nil), register(productionToken, "production", user: nil),
            register(userSandboxToken, "sandbox", user: "sam"), register(userProductionToken, "production", user: "sam"),
            // The same token string in another app is not this app's device.
            DeviceEvent(app: "other.app", platform: .ios, token: unknownToken, userID: nil, environment: "sandbox",
                        action: .register, at: registered),
        ]))

        let processor = BatchPipeline(
            stores: store, router: router, producer: nil, permits: nil, topics: TopicNames(prefix: "push", tiers: RetryTier.defaults),
            retryPolicy: configuration.retry.policy, maxConcurrentSends: 8,
            counters: Locked(WorkerCounters()), observer: NoWorkerObserver(), logger: MigratedDatabase.logger)
        let id = UUID()
        let recipients = [sandboxToken, productionToken, unknownToken].map { #"{"token": "\#($0)", "platform": "ios"}"# }
            + [#"{"user_id": "sam"}"#]
        let json = """
            {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "\(Self.app)",
             "created_at": "\(Timestamps.format(Date()))", "recipients": [\(recipients.joined(separator: ", "))],
             "alert": {"title": "t", "body": "b"}}
            """
        let outcome = try await processor.outcome(of: [
            KafkaMessage(topic: "push.notifications", partition: 0, offset: 0, key: nil, value: Array(json.utf8))
        ])
        router.shutdown()
        await pool.close()
        let productionStats = production.stats(), sandboxStats = sandbox.stats()
        try await production.shutdown()
        try await sandbox.shutdown()

        let statuses = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, $0.status) })
        XCTAssertEqual(statuses, [
            sandboxToken: .accepted, productionToken: .accepted, unknownToken: .accepted,
            userSandboxToken: .accepted, userProductionToken: .accepted,
        ], "a wrong host would have answered BadDeviceToken: \(outcome.deliveries.map { ($0.key.token.prefix(4), $0.providerReason) })")
        XCTAssertEqual(sandboxStats.apnsAccepted, 2, "the sandbox token and the user's sandbox device")
        XCTAssertEqual(productionStats.apnsAccepted, 3, "production, unknown to the registry, the user's production device")
        XCTAssertTrue(outcome.retryNeeds.isEmpty)
    }
}
