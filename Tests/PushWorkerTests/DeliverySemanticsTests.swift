import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 16, items 1 and 3–5, through the worker's own processor and store
/// against real PostgreSQL and the simulator over TLS + HTTP/2: dead tokens
/// stay dead, one notification id is one send per device whatever its
/// `created_at`, a failed credential fetch is not an attempt, and attempts
/// name the worker that made them.
final class DeliverySemanticsTests: XCTestCase {
    static let app = "com.example.semantics"
    static let teamID = "TEAM0000SE"
    static let keyID = "KEYSEM0001"
    static let project = "semantics-prod"
    static let email = "push@semantics-prod.iam.gserviceaccount.com"

    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n % 256), count: 32) }

    /// A simulator for APNs and FCM, a worker configuration for one app using
    /// both, and a throwaway database.
    struct Stack {
        let simulator: PushSimulator
        let configuration: WorkerConfiguration
        let db: MigratedDatabase
        let pool: PostgresPool
        let dir: String

        func processor(store: WorkerStores, counters: Locked<WorkerCounters> = Locked(WorkerCounters()),
                       configuration: WorkerConfiguration? = nil) throws -> (BatchPipeline, ProviderRouter) {
            let configuration = configuration ?? self.configuration
            let router = try ProviderRouter(configuration: configuration, logger: MigratedDatabase.logger)
            let processor = BatchPipeline(
                stores: store, router: router, producer: nil, permits: nil, topics: TopicNames(prefix: "push", tiers: RetryTier.defaults),
                retryPolicy: configuration.retry.policy, maxConcurrentSends: 16, counters: counters,
                observer: NoWorkerObserver(), logger: MigratedDatabase.logger, registry: configuration.registry)
            return (processor, router)
        }

        /// APNs requests the simulator answered, any status.
        var apnsRequests: Int { simulator.stats().responses.filter { $0.key.hasPrefix("apns|") }.values.reduce(0, +) }
        var fcmRequests: Int { simulator.stats().responses.filter { $0.key.hasPrefix("fcm|") }.values.reduce(0, +) }

        func close() async throws {
            await pool.close()
            try await simulator.shutdown()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    static func stack(deadTokens: [String: Date] = [:]) async throws -> Stack {
        let key = DevCredentials.makeAPNsKey()
        let made = try DevCredentials.makeServiceAccount(projectID: project, clientEmail: email, tokenURI: "https://127.0.0.1/token")
        let simulator = PushSimulator(
            configuration: SimulatorConfiguration(
                apnsKeys: [SimulatorAPNsKey(keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKeyPEM)],
                fcmAccounts: [SimulatorFCMAccount(clientEmail: email, privateKeyID: made.privateKeyID, projectID: project,
                                                  publicKeyPEM: made.publicKeyPEM)],
                deadTokens: deadTokens),
            logger: MigratedDatabase.logger)
        try await simulator.start()
        let dir = NSTemporaryDirectory() + "pushfleet-semantics-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try simulator.caCertificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        try key.privateKeyPEM.write(toFile: dir + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try made.json.write(toFile: dir + "/account.json", atomically: true, encoding: .utf8)
        var configuration = WorkerConfiguration()
        configuration.tls.caBundlePath = dir + "/ca.pem"
        var fcm = WorkerConfiguration.FCM(serviceAccountPath: dir + "/account.json")
        fcm.baseURL = "https://127.0.0.1:\(simulator.port)"
        fcm.tokenURI = simulator.tokenURI
        configuration.apps[app] = .init(
            apns: .init(topic: app, teamID: teamID, keyID: keyID, keyPath: dir + "/AuthKey.p8",
                        baseURL: "https://127.0.0.1:\(simulator.port)"),
            fcm: fcm)
        let db = try await MigratedDatabase.make()
        return Stack(simulator: simulator, configuration: configuration, db: db, pool: db.pool(), dir: dir)
    }

    static func message(id: UUID = UUID(), createdAt: Date = Date(), tokens: [String], platform: String = "ios",
                        offset: Int64 = 0, topic: String = "push.notifications",
                        headers: [(name: String, value: [UInt8])] = []) -> KafkaMessage {
        let recipients = tokens.map { #"{"token": "\#($0)", "platform": "\#(platform)"}"# }.joined(separator: ", ")
        let json = """
            {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "\(app)",
             "created_at": "\(Timestamps.format(createdAt))", "recipients": [\(recipients)],
             "alert": {"title": "t", "body": "b"}}
            """
        return KafkaMessage(topic: topic, partition: 0, offset: offset, key: nil, value: Array(json.utf8), headers: headers)
    }

    // MARK: 1. Dead tokens stay dead

    func testATokenTheRegistryHasAsInvalidIsNotSentAgain() async throws {
        let dead = (1...20).map(Self.token)
        let stack = try await Self.stack(deadTokens: Dictionary(uniqueKeysWithValues: dead.map { ($0, Date().addingTimeInterval(-3_600)) }))
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let (processor, router) = try stack.processor(store: store)
        // First notification: APNs answers 410 for each, the worker invalidates them.
        let first = try await processor.outcome(of: [Self.message(tokens: dead)])
        XCTAssertEqual(first.deliveries.filter { $0.status == .invalidToken && $0.providerReason == "Unregistered" }.count, 20)
        try await store.writer.write(first)
        XCTAssertEqual(stack.apnsRequests, 20)

        // Twenty new notifications addressed directly to the dead tokens: none is sent.
        let again = try await processor.outcome(of: (0..<20).map { Self.message(tokens: [dead[$0]], offset: Int64($0 + 1)) })
        try await store.writer.write(again)
        XCTAssertEqual(stack.apnsRequests, 20, "no request may go to a token the registry has as invalid")
        XCTAssertEqual(again.deliveries.count, 20)
        for record in again.deliveries {
            XCTAssertEqual(record.status, .invalidToken)
            XCTAssertEqual(record.providerReason, "KnownInvalidToken")
            XCTAssertEqual(record.attempts, 0)
        }
        XCTAssertTrue(again.attempts.isEmpty, "no request, no attempt row")

        // A re-registration newer than what APNs said revives the token (the worker's own
        // write drops its cached view at once), and the next notification is sent.
        try await store.writer.write(BatchOutcome(deviceUpdates: [
            DeviceEvent(app: Self.app, platform: .ios, token: dead[0], userID: nil, environment: "production",
                        action: .register, at: Date())
        ]))
        _ = try await processor.outcome(of: [Self.message(tokens: [dead[0]], offset: 100)])
        XCTAssertEqual(stack.apnsRequests, 21, "a re-registered token is sent to again")
        router.shutdown()

        // An app configured to probe dead tokens sends anyway.
        var probing = stack.configuration
        probing.apps[Self.app]?.skipKnownInvalidTokens = false
        probing.registry.probingApps = [Self.app]
        let (prober, proberRouter) = try stack.processor(store: store, configuration: probing)
        _ = try await prober.outcome(of: [Self.message(tokens: [dead[1]], offset: 200)])
        XCTAssertEqual(stack.apnsRequests, 22, "skip_known_invalid_tokens: false sends to a known-invalid token")
        proberRouter.shutdown()
        try await stack.close()
    }

    func testTheRegistryIsAskedOncePerBatchAndCached() async throws {
        let stack = try await Self.stack()
        var settings = WorkerConfiguration.Registry()
        settings.cacheTTL = .seconds(60)
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger, registry: settings)
        let tokens = (1...5).map(Self.token)
        var asked: [AppToken: TokenRegistryState] = [:]
        asked = try await store.registry.tokenStates(Set(tokens.map { .init(app: Self.app, platform: .ios, token: $0) }))
        XCTAssertTrue(asked.isEmpty, "unknown tokens: valid, production")
        XCTAssertEqual(store.registryCache.count, 5, "the answers, unknown included, are kept")
        // This store's own invalidation drops its cached view at once.
        try await store.writer.write(BatchOutcome(invalidations: [
            TokenInvalidation(app: Self.app, platform: .ios, token: tokens[0], since: Date(), reason: "Unregistered", learnedAt: Date())
        ]))
        asked = try await store.registry.tokenStates([.init(app: Self.app, platform: .ios, token: tokens[0])])
        XCTAssertEqual(asked[.init(app: Self.app, platform: .ios, token: tokens[0])]?.invalid, true)
        try await stack.close()
    }

    // MARK: 3. One notification id is one send per device

    func testAReusedIDWithALaterOrEarlierCreatedAtIsNotSentAgain() async throws {
        let stack = try await Self.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let (processor, router) = try stack.processor(store: store)
        let base = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 600).rounded(.down))
        for (label, shift) in [("later", 120.0), ("earlier", -120.0)] {
            let id = UUID()
            let token = Self.token(label == "later" ? 101 : 102)
            let before = stack.apnsRequests
            let first = try await processor.outcome(of: [Self.message(id: id, createdAt: base, tokens: [token])])
            XCTAssertEqual(first.deliveries.map(\.status), [.accepted], label)
            try await store.writer.write(first)
            let replay = try await processor.outcome(of: [Self.message(id: id, createdAt: base.addingTimeInterval(shift), tokens: [token])])
            try await store.writer.write(replay)
            XCTAssertEqual(stack.apnsRequests - before, 1, "\(label): the same id and token with another created_at is not sent again")
            XCTAssertEqual(replay.suppressed, 1, label)
            let rows = try await stack.db.connection.query(
                "SELECT created_at FROM deliveries WHERE notification_id = $1", [.uuid(id)])
            XCTAssertEqual(rows.rows.count, 1, "\(label): one ledger row per (id, token)")
            XCTAssertEqual(try rows.first?.date("created_at"), base, "\(label): filed under the first message's created_at")
        }
        // Within one batch too, and a new device of a reused id is sent once, filed with the first.
        let id = UUID()
        let a = Self.token(103), b = Self.token(104)
        let before = stack.apnsRequests
        let batch = try await processor.outcome(of: [
            Self.message(id: id, createdAt: base, tokens: [a], offset: 1),
            Self.message(id: id, createdAt: base.addingTimeInterval(60), tokens: [a, b], offset: 2),
        ])
        try await store.writer.write(batch)
        XCTAssertEqual(stack.apnsRequests - before, 2, "a once, b once")
        let rows = try await stack.db.connection.query(
            "SELECT token, created_at FROM deliveries WHERE notification_id = $1 ORDER BY token", [.uuid(id)])
        XCTAssertEqual(rows.rows.map { $0["token"] }, [a, b])
        XCTAssertEqual(try rows.rows.map { try $0.date("created_at") }, [base, base])
        router.shutdown()
        try await stack.close()
    }

    /// A copy of a notification on the intake topic (a producer's repeat, or
    /// the batch again after a worker died past its outcome write) whose
    /// delivery already waits on a retry tier is not sent: the retry message
    /// carries it. The retry itself is sent, and once final the intake copy
    /// stays suppressed.
    func testAnIntakeRepeatOfADeliveryWaitingOnARetryTierIsNotSent() async throws {
        let stack = try await Self.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let (processor, router) = try stack.processor(store: store)
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil), count: 1)])
        let id = UUID()
        let token = Self.token(105)
        let intake = Self.message(id: id, tokens: [token], offset: 7)
        let first = try await processor.outcome(of: [intake])
        XCTAssertEqual(first.deliveries.map(\.status), [.retrying])
        let retries = first.outgoing.filter { $0.topic.hasPrefix("push.retry.") }
        XCTAssertEqual(retries.count, 1)
        try await store.writer.write(first)
        XCTAssertEqual(stack.apnsRequests, 1)
        // The backlog gauges read it: waiting on a tier is unfinished, which consumer lag cannot show.
        let backlog = try await LedgerStore(pool: stack.pool).unfinished()
        XCTAssertEqual(backlog.byStatus["retrying"], 1)
        XCTAssertNotNil(backlog.oldest)

        let repeated = try await processor.outcome(of: [Self.message(id: id, tokens: [token], offset: 8)])
        try await store.writer.write(repeated)
        XCTAssertEqual(repeated.suppressed, 1, "the intake copy waits for the retry tier's")
        XCTAssertTrue(repeated.deliveries.isEmpty && repeated.outgoing.isEmpty)
        XCTAssertEqual(stack.apnsRequests, 1, "not sent again from intake")

        let retry = try XCTUnwrap(retries.first)
        let fromTier = try await processor.outcome(of: [
            KafkaMessage(topic: retry.topic, partition: 0, offset: 0, key: retry.key, value: retry.value, headers: retry.headers),
        ])
        XCTAssertEqual(fromTier.deliveries.map(\.status), [.accepted], "the retry tier's copy is sent")
        try await store.writer.write(fromTier)
        let after = try await LedgerStore(pool: stack.pool).unfinished()
        XCTAssertNil(after.byStatus["retrying"], "final: no longer in the backlog")
        XCTAssertEqual(stack.apnsRequests, 2)

        let late = try await processor.outcome(of: [Self.message(id: id, tokens: [token], offset: 9)])
        XCTAssertEqual(late.suppressed, 1)
        XCTAssertEqual(stack.apnsRequests, 2)
        let rows = try await stack.db.connection.query(
            "SELECT status, attempts FROM deliveries WHERE notification_id = $1", [.uuid(id)])
        XCTAssertEqual(rows.rows.map { $0["status"] }, ["accepted"])
        XCTAssertEqual(rows.rows.map { $0["attempts"] }, ["2"])

        // A retry that is long overdue is presumed lost (its topic deleted, or past
        // retention): past `retryOwnership` after the last attempt, an intake copy is sent.
        try stack.simulator.setScenarios([SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil), count: 1)])
        let lostID = UUID()
        let lostToken = Self.token(106)
        let waiting = try await processor.outcome(of: [Self.message(id: lostID, tokens: [lostToken], offset: 10)])
        XCTAssertEqual(waiting.deliveries.map(\.status), [.retrying])
        try await store.writer.write(waiting)
        let ownership = RetryPolicy().retryOwnership.seconds
        XCTAssertEqual(ownership, 7_200, "the longest Retry-After honoured (1 h), plus an hour")
        let requestsBefore = stack.apnsRequests
        _ = try await stack.db.connection.query(
            "UPDATE deliveries SET last_attempt_at = last_attempt_at - make_interval(secs => $2) WHERE notification_id = $1",
            [.uuid(lostID), .double(ownership - 60)])
        let stillOwned = try await processor.outcome(of: [Self.message(id: lostID, tokens: [lostToken], offset: 11)])
        XCTAssertEqual(stillOwned.suppressed, 1, "a minute inside the window the retry still owns it")
        _ = try await stack.db.connection.query(
            "UPDATE deliveries SET last_attempt_at = last_attempt_at - interval '2 minutes' WHERE notification_id = $1", [.uuid(lostID)])
        let overdue = try await processor.outcome(of: [Self.message(id: lostID, tokens: [lostToken], offset: 12)])
        XCTAssertEqual(overdue.suppressed, 0)
        XCTAssertEqual(overdue.deliveries.map(\.status), [.accepted], "a minute past the window the intake copy is sent")
        XCTAssertEqual(stack.apnsRequests - requestsBefore, 1)
        router.shutdown()
        try await stack.close()
    }

    // MARK: 4. A failed credential fetch is not an attempt

    func testAFailingTokenEndpointSpendsNoAttemptAndWritesNoAttemptRow() async throws {
        let stack = try await Self.stack()
        try stack.simulator.setScenarios([SimulatorScenario(provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        let counters = Locked(WorkerCounters())
        let (processor, router) = try stack.processor(store: store, counters: counters)
        // On its third attempt already (a retry tier message): a credential failure must not move it on.
        var headers = RetryHeaders()
        headers.attempt = 3
        let message = Self.message(tokens: ["fcm-token-0001:APA91bsemantics", "fcm-token-0002:APA91bsemantics"], platform: "android",
                                   topic: "push.retry.1m", headers: headers.kafkaHeaders)
        let outcome = try await processor.outcome(of: [message])
        try await store.writer.write(outcome)
        XCTAssertEqual(stack.fcmRequests, 0, "the token endpoint failed: no FCM request was made")
        XCTAssertTrue(outcome.attempts.isEmpty, "no provider attempt is recorded for a missing credential")
        XCTAssertEqual(outcome.deliveries.map(\.status), [.parked, .parked])
        XCTAssertEqual(Set(outcome.deliveries.compactMap(\.providerReason)), ["CredentialUnavailable(token_endpoint)"])
        XCTAssertEqual(outcome.deliveries.map(\.attempts), [0, 0])
        let retry = try XCTUnwrap(outcome.outgoing.first)
        XCTAssertEqual(outcome.outgoing.count, 1, "one parked message for the message's two held recipients")
        XCTAssertEqual(retry.topic, "push.parked", "parked for its app and provider, not cycled through the retry tiers")
        XCTAssertEqual(retry.key.map { String(decoding: $0, as: UTF8.self) }, "fcm/\(Self.app)", "keyed by its party")
        XCTAssertEqual(RetryHeaders(message: KafkaMessage(topic: retry.topic, partition: 0, offset: 0, key: nil, value: [],
                                                       headers: retry.headers)).attempt, 3, "the attempt number is not spent")
        XCTAssertEqual(counters.withLock { $0.credentialFailures.values.reduce(0, +) }, 2)
        let attemptRows = try await stack.db.connection.query("SELECT count(*) AS n FROM delivery_attempts")
        XCTAssertEqual(try attemptRows.first?.int("n"), 0)
        router.shutdown()
        try await stack.close()
    }

    /// A credential that cannot be had holds a delivery no longer than
    /// `retry.max_credential_wait_seconds`: parked, looked at again, and then
    /// dead-lettered naming why, never looping for ever.
    func testACredentialThatCannotBeHadEndsInADeadLetterAfterItsLimit() async throws {
        let stack = try await Self.stack()
        try stack.simulator.setScenarios([SimulatorScenario(provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: nil))])
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
        var configuration = stack.configuration
        configuration.retry.maxCredentialHold = .seconds(60)
        let (processor, router) = try stack.processor(store: store, configuration: configuration)
        let message = Self.message(tokens: ["fcm-token-0009:APA91bsemantics"], platform: "android")
        let first = try await processor.outcome(of: [message])
        try await store.writer.write(first)
        XCTAssertEqual(first.deliveries.map(\.status), [.parked])
        let parked = try XCTUnwrap(first.outgoing.first)
        XCTAssertEqual(parked.topic, "push.parked")
        // Read back from the parked topic 61 s after it was first parked (the header says when).
        var headers = RetryHeaders(message: KafkaMessage(topic: parked.topic, partition: 0, offset: 0, key: nil, value: [],
                                                         headers: parked.headers))
        headers.heldSince = Date().addingTimeInterval(-61)
        let again = try await processor.outcome(of: [KafkaMessage(topic: parked.topic, partition: 0, offset: 1, key: parked.key,
                                                                   value: parked.value, headers: headers.kafkaHeaders)])
        try await store.writer.write(again)
        XCTAssertEqual(again.deliveries.map(\.status), [.deadLettered])
        let letter = try XCTUnwrap(again.outgoing.first)
        XCTAssertEqual(letter.topic, "push.dlq")
        XCTAssertEqual(letter.label, "held_too_long")
        let reason = RetryHeaders(message: KafkaMessage(topic: letter.topic, partition: 0, offset: 0, key: nil, value: [],
                                                        headers: letter.headers)).reason ?? ""
        XCTAssertTrue(reason.contains("held longer than 60 s") && reason.contains("CredentialUnavailable(token_endpoint)"), reason)
        XCTAssertEqual(stack.fcmRequests, 0, "no FCM request without a credential")
        XCTAssertLessThanOrEqual(stack.simulator.stats().count("oauth", 503, "temporarily_unavailable"), 2,
                                 "the token endpoint is asked once per back-off, not once per send")
        let row = try await stack.db.connection.query("SELECT status, attempts FROM deliveries")
        XCTAssertEqual(row.first?["status"], "dead_lettered")
        XCTAssertEqual(try row.first?.int("attempts"), 0)
        router.shutdown()
        try await stack.close()
    }

    // MARK: 5. Attempts name the worker

    func testAttemptsRecordTheConfiguredWorkerID() async throws {
        let stack = try await Self.stack()
        let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger, workerID: "replica-7")
        let (processor, router) = try stack.processor(store: store)
        try await store.writer.write(try await processor.outcome(of: [Self.message(tokens: [Self.token(50)])]))
        let rows = try await stack.db.connection.query("SELECT DISTINCT worker FROM delivery_attempts")
        XCTAssertEqual(rows.rows.map { $0["worker"] }, ["replica-7"])
        router.shutdown()
        try await stack.close()
    }

    func testTheDefaultWorkerIDIsHostnameAndPID() {
        let id = WorkerConfiguration.Worker().id
        XCTAssertTrue(id.hasSuffix("-\(ProcessInfo.processInfo.processIdentifier)"), id)
        XCTAssertNotEqual(id, "pushfleet")
    }
}
