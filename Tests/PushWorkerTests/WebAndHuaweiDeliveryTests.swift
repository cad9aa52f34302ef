import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushProviders
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// Issue 19 through the worker's own processor and store, against real
/// PostgreSQL and the simulator over TLS + HTTP/2: browsers and Huawei phones
/// registered on `push.devices` receive what is addressed to their user (the
/// simulator decrypts the browser's copy), gone subscriptions and dead Push
/// Kit tokens are invalidated, and a subscription the worker must not or
/// cannot send to is rejected without a request.
final class WebAndHuaweiDeliveryTests: XCTestCase {
    static let app = "com.example.web"
    static let hmsAppID = "106950001"
    static let hmsSecret = "hms-secret-for-tests"

    struct Stack {
        let simulator: PushSimulator
        let inbox: SimulatorWebPushInbox
        let configuration: WorkerConfiguration
        let db: MigratedDatabase
        let pool: PostgresPool
        let dir: String

        var origin: String { "https://127.0.0.1:\(simulator.port)" }

        func processor(_ store: WorkerStores) throws -> BatchPipeline {
            BatchPipeline(
                stores: store, router: try ProviderRouter(configuration: configuration, logger: MigratedDatabase.logger),
                producer: nil, permits: nil,
                topics: TopicNames(prefix: "push", tiers: RetryTier.defaults), retryPolicy: configuration.retry.policy,
                maxConcurrentSends: 8, counters: Locked(WorkerCounters()), observer: NoWorkerObserver(),
                logger: MigratedDatabase.logger, registry: configuration.registry)
        }

        /// Requests the simulator answered for one provider, any status.
        func requests(_ provider: String) -> Int {
            simulator.stats().responses.filter { $0.key.hasPrefix(provider + "|") }.values.reduce(0, +)
        }

        func close() async throws {
            await pool.close()
            try await simulator.shutdown()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    static func stack(hmsClientID: String? = nil) async throws -> Stack {
        let vapid = DevCredentials.makeAPNsKey()  // a P-256 key pair, as VAPID signs with
        let inbox = SimulatorWebPushInbox()
        var simulatorConfiguration = SimulatorConfiguration(
            webPushInbox: inbox, hmsApps: [SimulatorHMSApp(appID: hmsAppID, clientSecret: hmsSecret, clientID: hmsClientID)])
        simulatorConfiguration.webPushVAPIDKeys = [try VAPIDSigner(privateKeyPEM: vapid.privateKeyPEM, subject: "mailto:t@example.com").publicKeyBase64URL]
        let simulator = PushSimulator(configuration: simulatorConfiguration, logger: MigratedDatabase.logger)
        try await simulator.start()
        let dir = NSTemporaryDirectory() + "pushfleet-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try simulator.caCertificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        try vapid.privateKeyPEM.write(toFile: dir + "/vapid.pem", atomically: true, encoding: .utf8)
        try (hmsSecret + "\n").write(toFile: dir + "/hms-secret", atomically: true, encoding: .utf8)
        var configuration = WorkerConfiguration()
        configuration.tls.caBundlePath = dir + "/ca.pem"
        var webpush = WorkerConfiguration.WebPush(vapidPrivateKeyPath: dir + "/vapid.pem", subject: "mailto:t@example.com")
        webpush.allowedHosts = ["127.0.0.1"]
        var hms = WorkerConfiguration.HMS(appID: hmsAppID, clientSecretPath: dir + "/hms-secret")
        hms.clientID = hmsClientID
        hms.baseURL = "https://127.0.0.1:\(simulator.port)"
        hms.tokenURL = "https://127.0.0.1:\(simulator.port)/oauth2/v3/token"
        configuration.apps[app] = .init(webpush: webpush, hms: hms)
        let db = try await MigratedDatabase.make()
        return Stack(simulator: simulator, inbox: inbox, configuration: configuration, db: db, pool: db.pool(), dir: dir)
    }

    static func message(_ recipients: String, id: UUID = UUID(), offset: Int64 = 0,
                        alert: String = #"{"title": "Order 7", "body": "shipped"}"#) -> KafkaMessage {
        let json = """
            {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "\(app)",
             "created_at": "\(Timestamps.format(Date()))", "recipients": [\(recipients)],
             "collapse_key": "order-7", "alert": \(alert), "data": {"order": 7}}
            """
        return KafkaMessage(topic: "push.notifications", partition: 0, offset: offset, key: nil, value: Array(json.utf8))
    }

    static func subscriptionJSON(endpoint: String, p256dh: String, auth: String) -> String {
        #"{"endpoint": "\#(endpoint)", "keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)"}}"#
    }

    func testAUserReachesItsBrowserAndHuaweiPhoneThroughTheRegistry() async throws {
        let stack = try await Self.stack()
        do {
            let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
            let browser = SimulatorWebPushSubscriptions.subscription(id: "ann-laptop", origin: stack.origin)
            let registration = """
                {"schema_version": 1, "app": "\(Self.app)", "platform": "web", "user_id": "ann", "action": "register",
                 "at": "\(Timestamps.format(Date().addingTimeInterval(-60)))",
                 "subscription": \(Self.subscriptionJSON(endpoint: browser.endpoint, p256dh: browser.p256dh, auth: browser.auth))}
                """
            let phone = """
                {"schema_version": 1, "app": "\(Self.app)", "platform": "huawei", "token": "IQAAAACy0annphone", "user_id": "ann",
                 "action": "register", "at": "\(Timestamps.format(Date().addingTimeInterval(-60)))"}
                """
            let events = try [registration, phone].map { try DeviceEvent.decode(Array($0.utf8)).get() }
            XCTAssertEqual(events[0].token, browser.endpoint)
            XCTAssertEqual(events[0].webKeys, WebPushKeys(p256dh: browser.p256dh, auth: browser.auth))
            try await store.writer.write(BatchOutcome(deviceUpdates: events))
            let stored = try await stack.db.row("SELECT web_p256dh, web_auth FROM devices WHERE platform = 'web'")
            XCTAssertEqual(stored["web_p256dh"], browser.p256dh)

            let id = UUID()
            let outcome = try await stack.processor(store).outcome(of: [Self.message(#"{"user_id": "ann"}"#, id: id)])
            XCTAssertEqual(Set(outcome.deliveries.map { "\($0.platform?.rawValue ?? "")|\($0.status.rawValue)" }),
                           ["web|accepted", "huawei|accepted"], "\(outcome.deliveries)")
            XCTAssertEqual(outcome.attempts.count, 2)
            try await store.writer.write(outcome)

            // The browser's copy, decrypted by the simulator with the subscription's private key.
            let received = stack.inbox.deliveries(subscriptionID: "ann-laptop")
            XCTAssertEqual(received.count, 1)
            let payload = try JSONValue.parse(received.first?.plaintext ?? [])
            XCTAssertEqual(payload["id"]?.stringValue, id.uuidString.lowercased())
            XCTAssertEqual(payload["title"]?.stringValue, "Order 7")
            XCTAssertEqual(payload["body"]?.stringValue, "shipped")
            XCTAssertEqual(payload["data"]?["order"]?.stringValue, "7")
            XCTAssertEqual(received.first?.topic, "order-7")
            XCTAssertEqual(received.first?.urgency, "high")
            let row = try await stack.db.row(
                "SELECT count(*) AS n, count(provider_message_id) AS ids FROM deliveries WHERE notification_id = $1 AND status = 'accepted'",
                [.uuid(id)])
            XCTAssertEqual(row["n"], "2")
            XCTAssertEqual(row["ids"], "2", "the push service's Location and Push Kit's requestId are kept")
            try await stack.close()
        } catch {
            try? await stack.close()
            throw error
        }
    }

    func testGoneSubscriptionsAndDeadPushKitTokensAreInvalidated() async throws {
        let stack = try await Self.stack()
        do {
            let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
            let gone = SimulatorWebPushSubscriptions.subscription(id: "gone-old-browser", origin: stack.origin)
            let outcome = try await stack.processor(store).outcome(of: [Self.message("""
                {"platform": "web", "subscription": \(Self.subscriptionJSON(endpoint: gone.endpoint, p256dh: gone.p256dh, auth: gone.auth))},
                {"token": "dead-IQAAAACy0old", "platform": "huawei"}
                """)])
            XCTAssertEqual(Set(outcome.deliveries.map { "\($0.platform?.rawValue ?? "")|\($0.status.rawValue)|\($0.providerReason ?? "")" }),
                           ["web|invalid_token|Gone", "huawei|invalid_token|80300007"])
            XCTAssertEqual(Set(outcome.invalidations.map(\.token)), [gone.endpoint, "dead-IQAAAACy0old"])
            try await store.writer.write(outcome)
            let row = try await stack.db.row("SELECT count(*) AS n FROM devices WHERE invalidated_at IS NOT NULL")
            XCTAssertEqual(row["n"], "2", "a web row learned from a 410 has no keys, and the check allows it")

            // Sent again: both are known dead now, so nothing reaches the simulator.
            let before = stack.requests("webpush") + stack.requests("hms")
            let again = try await stack.processor(store).outcome(of: [Self.message("""
                {"platform": "web", "subscription": \(Self.subscriptionJSON(endpoint: gone.endpoint, p256dh: gone.p256dh, auth: gone.auth))},
                {"token": "dead-IQAAAACy0old", "platform": "huawei"}
                """)])
            XCTAssertEqual(Set(again.deliveries.map(\.providerReason)), ["KnownInvalidToken"])
            XCTAssertEqual(stack.requests("webpush") + stack.requests("hms"), before)
            try await stack.close()
        } catch {
            try? await stack.close()
            throw error
        }
    }

    func testSubscriptionsTheWorkerMustNotOrCannotSendToAreRejectedWithoutARequest() async throws {
        let stack = try await Self.stack()
        do {
            let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
            let live = SimulatorWebPushSubscriptions.subscription(id: "live", origin: stack.origin)
            // 65 bytes with 0x04 first passes intake, but is no point on P-256.
            let offCurve = Base64URL.encode([0x04] + [UInt8](repeating: 0x01, count: 64))
            let elsewhere = "https://push.internal.example/wp/live"
            let outcome = try await stack.processor(store).outcome(of: [Self.message("""
                {"platform": "web", "subscription": \(Self.subscriptionJSON(endpoint: live.endpoint, p256dh: offCurve, auth: live.auth))},
                {"platform": "web", "subscription": \(Self.subscriptionJSON(endpoint: elsewhere, p256dh: live.p256dh, auth: live.auth))}
                """)])
            let reasons = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, "\($0.status.rawValue)|\($0.providerReason ?? "")") })
            XCTAssertEqual(reasons[live.endpoint], "rejected|InvalidSubscriptionKeys")
            XCTAssertEqual(reasons[elsewhere], "rejected|EndpointNotAllowed")
            XCTAssertTrue(outcome.attempts.isEmpty, "no request was made: \(outcome.attempts)")
            XCTAssertTrue(outcome.invalidations.isEmpty, "a refused subscription is not the push service saying it is gone")
            XCTAssertEqual(stack.requests("webpush"), 0)
            // Push Kit shows only a title with a body: a title alone is rejected for the Huawei phone, unsent.
            let titleOnly = try await stack.processor(store).outcome(of: [Self.message(
                #"{"token": "IQAAAACy0title", "platform": "huawei"}"#, offset: 1, alert: #"{"title": "Order 7"}"#)])
            XCTAssertEqual(titleOnly.deliveries.map { "\($0.status.rawValue)|\($0.providerReason ?? "")" }, ["rejected|IncompleteAlert"])
            XCTAssertTrue(titleOnly.attempts.isEmpty)
            XCTAssertEqual(stack.requests("hms"), 0)
            try await stack.close()
        } catch {
            try? await stack.close()
            throw error
        }
    }

    func testA429FromAPushServiceGoesToARetryTierWithTheSubscriptionItNeeds() async throws {
        let stack = try await Self.stack()
        do {
            let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
            let slow = SimulatorWebPushSubscriptions.subscription(id: "ratelimited-tab", origin: stack.origin)
            let subscription = Self.subscriptionJSON(endpoint: slow.endpoint, p256dh: slow.p256dh, auth: slow.auth)
            let outcome = try await stack.processor(store).outcome(of: [Self.message(
                #"{"platform": "web", "subscription": \#(subscription)}, {"token": "flow-IQAAAACy0busy", "platform": "huawei"}"#)])
            XCTAssertEqual(Set(outcome.deliveries.map { "\($0.platform?.rawValue ?? "")|\($0.status.rawValue)" }),
                           ["web|retrying", "huawei|retrying"])
            XCTAssertEqual(outcome.outgoing.count, 1, "the notification's recipients due on the same tier travel together")
            // What goes back through the retry tier carries the browser's keys, so the next try can encrypt.
            let retried = try outcome.outgoing.map { try PushNotification.decode($0.value).get() }.flatMap(\.recipients)
            XCTAssertTrue(retried.contains(Recipient(endpoint: slow.endpoint, keys: WebPushKeys(p256dh: slow.p256dh, auth: slow.auth))),
                          "\(retried)")
            XCTAssertTrue(retried.contains(Recipient(token: "flow-IQAAAACy0busy", platform: .huawei)))
            XCTAssertEqual(retried.count, 2)
            XCTAssertTrue(outcome.outgoing.allSatisfy { $0.topic.hasPrefix("push.retry.") }, "\(outcome.outgoing.map(\.topic))")
            try await stack.close()
        } catch {
            try? await stack.close()
            throw error
        }
    }

    func testPushKitCredentialsWithAnOAuthClientIDApartFromTheAppID() async throws {
        let stack = try await Self.stack(hmsClientID: "108765432109876")
        do {
            let store = WorkerStores(pool: stack.pool, logger: MigratedDatabase.logger)
            let outcome = try await stack.processor(store).outcome(of: [Self.message(#"{"token": "IQAAAACy0client", "platform": "huawei"}"#)])
            XCTAssertEqual(outcome.deliveries.map(\.status), [.accepted], "\(outcome.deliveries)")
            XCTAssertEqual(stack.simulator.stats().tokensIssued, 1, "the grant named the client id, the send the app id")
            try await stack.close()
        } catch {
            try? await stack.close()
            throw error
        }
    }

    func testRegistryMessagesForBrowsersAreCheckedLikeIntake() {
        func decode(_ json: String) -> [String] {
            switch DeviceEvent.decode(Array(json.utf8)) {
            case .success: return []
            case .failure(let error): return error.issues.map(\.path)
            }
        }
        let at = Timestamps.format(Date())
        let sub = SimulatorWebPushSubscriptions.subscription(id: "x", origin: "https://push.example.net")
        let good = Self.subscriptionJSON(endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth)
        let base = #""schema_version": 1, "app": "a", "action": "register", "at": "\#(at)""#
        XCTAssertEqual(decode(#"{\#(base), "platform": "web", "subscription": \#(good)}"#), [])
        XCTAssertEqual(decode(#"{\#(base), "platform": "huawei", "token": "IQAAAA"}"#), [])
        XCTAssertEqual(decode(#"{\#(base), "platform": "web", "token": "https://push.example.net/x"}"#), ["token", "subscription"])
        XCTAssertEqual(decode(#"{\#(base), "platform": "ios", "token": "ab", "subscription": \#(good)}"#), ["subscription"])
        XCTAssertEqual(decode(#"{\#(base), "platform": "web", "subscription": {"endpoint": "http://x/y", "keys": {"p256dh": "B", "auth": ""}}}"#),
                       ["subscription.endpoint", "subscription.keys.p256dh", "subscription.keys.auth"])
        XCTAssertEqual(decode(#"{\#(base), "platform": "blackberry", "token": "t"}"#), ["platform"])
    }
}
