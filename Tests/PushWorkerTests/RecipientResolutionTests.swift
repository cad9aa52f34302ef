import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest
@testable import PushWorker

/// User-id recipients resolve to the user's valid devices (one query per
/// batch); a user without one gets a recorded `NoValidDevices` outcome; FCM
/// topic/condition targets become deliveries keyed `topic:` / `condition:`.
/// Real PostgreSQL; no app is configured, so nothing is sent (each device's
/// outcome is `rejected UnknownApp`, which still shows what was resolved).
final class RecipientResolutionTests: XCTestCase {
    static let app = "com.example.resolve"

    static func message(_ json: String, offset: Int64, topic: String = "push.notifications") -> KafkaMessage {
        KafkaMessage(topic: topic, partition: 0, offset: offset, key: nil, value: Array(json.utf8))
    }

    static func notification(id: UUID, recipients: String) -> String {
        """
        {"schema_version": 1, "id": "\(id.uuidString.lowercased())", "app": "\(app)",
         "created_at": "\(Timestamps.format(Date()))", "recipients": [\(recipients)],
         "alert": {"title": "t", "body": "b"}}
        """
    }

    static func processor(_ pool: PostgresPool) throws -> BatchPipeline {
        let logger = MigratedDatabase.logger
        let configuration = WorkerConfiguration()
        return BatchPipeline(
            stores: WorkerStores(pool: pool, logger: logger),
            router: try ProviderRouter(configuration: configuration, logger: logger), producer: nil, permits: nil,
            topics: TopicNames(prefix: "push", tiers: RetryTier.defaults), retryPolicy: configuration.retry.policy,
            maxConcurrentSends: 8, counters: Locked(WorkerCounters()), observer: NoWorkerObserver(),
            logger: logger)
    }

    func testUserIDsResolveToValidDevicesAndAUserWithoutOneIsRecorded() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let now = Date()
        let register = { (token: String, platform: Platform, user: String) in
            DeviceEvent(app: Self.app, platform: platform, token: token, userID: user, environment: "production",
                        action: .register, at: now.addingTimeInterval(-60))
        }
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(BatchOutcome(deviceUpdates: [
            register("ios-token-a", .ios, "alice"), register("android-token-a", .android, "alice"),
            register("ios-token-dead", .ios, "alice"), register("ios-token-b", .ios, "bob"),
            DeviceEvent(app: Self.app, platform: .ios, token: "ios-token-dead", userID: "alice", environment: "production",
                        action: .unregister, at: now.addingTimeInterval(-30)),
            DeviceEvent(app: "other.app", platform: .ios, token: "ios-token-c", userID: "carol", environment: "production",
                        action: .register, at: now),
        ]))
        let first = UUID(), second = UUID()
        let outcome = try await Self.processor(pool).outcome(of: [
            Self.message(Self.notification(id: first, recipients: #"{"user_id": "alice"}, {"user_id": "carol"}"#), offset: 0),
            Self.message(Self.notification(id: second, recipients: #"{"user_id": "bob"}, {"topic": "news"}, {"condition": "'a' in topics"}"#), offset: 1),
        ])
        let byNotification = Dictionary(grouping: outcome.deliveries, by: \.key.notificationID)
        XCTAssertEqual(Set(byNotification[first]?.map(\.key.token) ?? []), ["ios-token-a", "android-token-a", "user:carol"],
                       "alice's valid devices (not the unregistered one); carol has none in this app")
        let carol = try XCTUnwrap(byNotification[first]?.first { $0.key.token == "user:carol" })
        XCTAssertEqual(carol.status, .rejected)
        XCTAssertEqual(carol.providerReason, "NoValidDevices")
        XCTAssertNil(carol.platform)
        XCTAssertEqual(Set(byNotification[second]?.map(\.key.token) ?? []), ["ios-token-b", "topic:news", "condition:'a' in topics"])
        XCTAssertEqual(byNotification[second]?.first { $0.key.token == "topic:news" }?.platform, .android)
        XCTAssertTrue(outcome.outgoing.isEmpty, "nothing dead-lettered as unsupported")

        // Written, the no-device outcome is a final ledger row analysts can see.
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(outcome)
        let row = try await db.row("SELECT platform, status, provider_reason, detail FROM deliveries WHERE token = 'user:carol'")
        XCTAssertEqual(row["platform"], "none")
        XCTAssertEqual(row["status"], "rejected")
        XCTAssertEqual(row["provider_reason"], "NoValidDevices")
        XCTAssertEqual(row["detail"], "no valid devices for user carol in app \(Self.app)")
    }

    func testFCMTargetsAreRetriedAsTargetsNotAsDevices() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let processor = try Self.processor(pool)
        let n = try PushNotification.decode(Array(Self.notification(id: UUID(), recipients: #"{"topic": "news"}"#).utf8)).get()
        let item = WorkItem(
            source: .init(notification: n, enqueuedAt: nil, headers: RetryHeaders(), sourceKey: nil),
            recipient: Recipient(token: "topic:news", platform: .android), fcmTarget: .topic("news"),
            key: DeliveryKey(notificationID: n.id, token: "topic:news", createdAt: n.createdAt))
        var outcome = BatchOutcome()
        outcome.retryNeeds = [RetryNeed(item: item, reason: "Unavailable", providerStatus: 503, retryAfter: nil, attempts: 1,
                                        firstAttemptAt: Date(), lastAttemptAt: Date())]
        processor.retries.schedule(&outcome)
        let retry = try XCTUnwrap(outcome.outgoing.first)
        XCTAssertEqual(retry.topic, "push.retry.5s")
        let again = try PushNotification.decode(retry.value).get()
        XCTAssertEqual(again.fcmTargets, [.topic("news")])
        XCTAssertEqual(again.recipients, [], "the synthetic key is never sent as a device token")
    }

    /// A notification to a user goes to at most 1,000 of the user's devices,
    /// the most recently registered; a `TooManyDevices` row says the rest were
    /// not sent to. A user with exactly 1,000 gets no such row.
    func testAUserIsSentToAtMostALimitOfDevicesAndTheRestAreRecorded() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let limit = UserFanOut.maxDevicesPerUser
        let now = Date()
        func register(_ user: String, _ count: Int) -> [DeviceEvent] {
            (0..<count).map { i in
                DeviceEvent(app: Self.app, platform: .ios, token: "\(user)-\(String(format: "%05d", i))", userID: user,
                            environment: "production", action: .register, at: now.addingTimeInterval(Double(i - count)))
            }
        }
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(BatchOutcome(
            deviceUpdates: register("many", limit + 3) + register("exact", limit)))
        let id = UUID()
        let outcome = try await Self.processor(pool).outcome(of: [
            Self.message(Self.notification(id: id, recipients: #"{"user_id": "many"}, {"user_id": "exact"}"#), offset: 0),
        ])
        let tokens = outcome.deliveries.map(\.key.token)
        let many = tokens.filter { $0.hasPrefix("many-") }
        XCTAssertEqual(many.count, limit)
        XCTAssertEqual(Set(many), Set((3..<(limit + 3)).map { "many-\(String(format: "%05d", $0))" }), "the most recently registered")
        XCTAssertEqual(tokens.filter { $0.hasPrefix("exact-") }.count, limit)
        let over = outcome.deliveries.filter { $0.key.token.hasPrefix("user:") }
        XCTAssertEqual(over.map(\.key.token), ["user:many"])
        XCTAssertEqual(over.first?.status, .rejected)
        XCTAssertEqual(over.first?.providerReason, "TooManyDevices")
        XCTAssertEqual(over.first?.detail,
                       "user many has more than \(limit) valid devices in app \(Self.app); sent to the \(limit) most recently registered")
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(outcome)
    }

    /// A message reaches at most `UserFanOut.maxDevicesPerMessage` devices
    /// through its user ids: in its order, the user that would pass that and
    /// every user after it with devices get a `TooManyDevices` row instead; a
    /// user with none still gets `NoValidDevices`. The budget is per message:
    /// another message of the batch naming a cut user still reaches it.
    func testAMessageReachesAtMostABudgetOfDevicesThroughItsUserIDs() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let perUser = UserFanOut.maxDevicesPerUser, budget = UserFanOut.maxDevicesPerMessage
        let full = budget / perUser  // users that exactly fill the budget
        let now = Date()
        var events: [DeviceEvent] = []
        for user in (0...full).map({ "u\($0)" }) + ["small"] {
            for i in 0..<(user == "small" ? 1 : perUser) {
                events.append(DeviceEvent(app: Self.app, platform: .android, token: "\(user)-\(i)", userID: user,
                                          environment: "production", action: .register, at: now))
            }
        }
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(BatchOutcome(deviceUpdates: events))
        let names = (0...full).map { #"{"user_id": "u\#($0)"}"# } + [#"{"user_id": "none"}"#, #"{"user_id": "small"}"#]
        let wide = UUID(), single = UUID()
        let outcome = try await Self.processor(pool).outcome(of: [
            Self.message(Self.notification(id: wide, recipients: names.joined(separator: ", ")), offset: 0),
            Self.message(Self.notification(id: single, recipients: #"{"user_id": "u\#(full)"}"#), offset: 1),
        ])
        let ofWide = outcome.deliveries.filter { $0.key.notificationID == wide }
        let devices = ofWide.filter { !$0.key.token.hasPrefix("user:") }
        XCTAssertEqual(devices.count, budget)
        XCTAssertEqual(Set(devices.map { String($0.key.token.prefix { $0 != "-" }) }), Set((0..<full).map { "u\($0)" }))
        let users = Dictionary(ofWide.filter { $0.key.token.hasPrefix("user:") }.map { ($0.key.token, $0) }) { a, _ in a }
        XCTAssertEqual(Set(users.keys), ["user:u\(full)", "user:none", "user:small"])
        XCTAssertEqual(users["user:none"]?.providerReason, "NoValidDevices")
        XCTAssertEqual(users["user:small"]?.providerReason, "TooManyDevices")
        XCTAssertEqual(users["user:u\(full)"]?.status, .rejected)
        XCTAssertEqual(users["user:u\(full)"]?.detail,
                       "not sent: with user u\(full) (\(perUser) valid devices in app \(Self.app)) the message's user ids "
                           + "would reach more than \(budget) devices; split the users over several messages")
        let ofSingle = outcome.deliveries.filter { $0.key.notificationID == single }
        XCTAssertEqual(ofSingle.count, perUser, "the other message reaches the user the first one left out")
        XCTAssertTrue(ofSingle.allSatisfy { $0.key.token.hasPrefix("u\(full)-") })
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(outcome)
        // Devices registered between the count and the load cannot pass the
        // plan: a user counted at 5 loads 5 (the most recent), not its 1,000.
        let loaded = try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).registry
            .devices(of: [AppUser(app: Self.app, userID: "u0"): 5, AppUser(app: Self.app, userID: "small"): 9])
        XCTAssertEqual(loaded[AppUser(app: Self.app, userID: "u0")]?.count, 5)
        XCTAssertEqual(loaded[AppUser(app: Self.app, userID: "small")]?.count, 1)
    }

    /// The plan alone: users in order until the budget, repeated users counted
    /// once per message, users with no device never cut.
    func testTheFanOutPlanTakesUsersInOrderUntilTheBudget() {
        let counts = [AppUser(app: "a", userID: "x"): 4, AppUser(app: "a", userID: "y"): 5,
                      AppUser(app: "a", userID: "z"): 2, AppUser(app: "b", userID: "x"): 7]
        let plan = UserFanOut([("a", ["x", "none", "y", "z"]), ("a", ["z"]), ("b", ["x"]), ("a", [])], counts: counts, budget: 9)
        XCTAssertEqual(plan.load, [AppUser(app: "a", userID: "x"): 4, AppUser(app: "a", userID: "y"): 5,
                                   AppUser(app: "a", userID: "z"): 2, AppUser(app: "b", userID: "x"): 7])
        XCTAssertEqual(plan.cut, [0: ["z"]])
        let tight = UserFanOut([("a", ["y", "x", "z"])], counts: counts, budget: 4)
        XCTAssertEqual(tight.cut, [0: ["y", "x", "z"]], "once a user is cut, every later one is: the message's order decides")
        XCTAssertTrue(tight.load.isEmpty)
    }

    /// Issue 18's memory bound: a batch whose deliveries pass half the
    /// permits' capacity is handled in parts, each the prefix whose
    /// deliveries (direct tokens, and each user's devices as counted) fit,
    /// with permits held for exactly those; the parts together are what the
    /// whole batch gives at once.
    func testABatchIsHandledInPartsThatFitTheDeliveryBound() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let now = Date()
        var events: [DeviceEvent] = []
        for (user, n) in [("wide", 900), ("mid", 200)] {
            for i in 0..<n {
                events.append(DeviceEvent(app: Self.app, platform: .android, token: "\(user)-\(i)", userID: user,
                                          environment: "production", action: .register, at: now))
            }
        }
        try await WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer.write(BatchOutcome(deviceUpdates: events))
        func direct(_ prefix: String, _ n: Int) -> String {
            (0..<n).map { #"{"token": "\#(prefix)-\#($0)", "platform": "android"}"# }.joined(separator: ", ")
        }
        let ids = (0..<6).map { _ in UUID() }
        let messages = [
            Self.message(Self.notification(id: ids[0], recipients: direct("a", 400)), offset: 0),
            Self.message(Self.notification(id: ids[1], recipients: direct("b", 400)), offset: 1),
            Self.message(Self.notification(id: ids[2], recipients: #"{"user_id": "wide"}"#), offset: 2),
            Self.message(Self.notification(id: ids[3], recipients: #"{"user_id": "mid"}"#), offset: 3),
            KafkaMessage(topic: "push.notifications", partition: 0, offset: 4, key: nil, value: [0x7B, 0x00, 0xFF]),
            Self.message(Self.notification(id: ids[5], recipients: direct("c", 1)), offset: 5),
            // The first message again (a producer's retry): one batch sends it once, whatever its parts.
            Self.message(Self.notification(id: ids[0], recipients: direct("a", 400)), offset: 6),
        ]
        let permits = DeliveryPermits(capacity: 2_000)  // parts of at most 1,000
        let processor = try Self.processor(pool)
        let policy = processor.decoder.policy()
        var batch = BatchParts(messages)
        var parts: [DecidedPart] = []
        while !batch.isDone {
            let candidates = batch.nextCandidates(budget: permits.partBudget()) { processor.decoder.decode($0, policy: policy) }
            let part = try await processor.decidePart(batch.ready.prefix(candidates), counted: batch.counted, handled: batch.handled,
                                                     permits: permits)
            XCTAssertEqual(permits.inUse, part.permits, "the part holds its permits until the caller gives them back")
            permits.release(part.permits)
            parts.append(part)
            batch.finish(part)
        }
        XCTAssertEqual(parts.map(\.taken), [2, 1, 4], "800 | 900 (the user's devices) | 200 + 1 + 1 + the repeat (400 at most)")
        let wide = AppUser(app: Self.app, userID: "wide"), mid = AppUser(app: Self.app, userID: "mid")
        XCTAssertEqual(parts[0].counted, [wide: 900, mid: 200], "the first part's candidates reach the users of the next parts")
        XCTAssertEqual(parts.map(\.permits), [800, 900, 602])
        XCTAssertEqual(permits.inUse, 0)
        XCTAssertEqual(parts.map { $0.outcome.deliveries.count }, [800, 900, 201])
        XCTAssertEqual(parts[2].outcome.suppressed, 400, "the repeat of the first part's message is suppressed, not sent again")
        XCTAssertEqual(parts[2].outcome.rejections.count, 1, "the undecodable message is rejected in its part")
        XCTAssertEqual(Set(parts[0].outcome.deliveries.map(\.key.notificationID)), Set(ids[0...1]))
        let whole = try await processor.outcome(of: messages)
        XCTAssertEqual(Set(parts.flatMap { $0.outcome.deliveries.map(\.key.token) }), Set(whole.deliveries.map(\.key.token)))
        XCTAssertEqual(whole.deliveries.count, 1_901)
        // A later part plans with the counts it is given (never counts a user twice):
        // told "mid" has 5, it loads 5 of its 200.
        let decoded = messages.map { processor.decoder.decode($0, policy: policy) }
        let planned = try await processor.decidePart(decoded[3...3], counted: [mid: 5], handled: [], permits: nil)
        XCTAssertEqual(planned.outcome.deliveries.count, 5)
        // A single message over the whole capacity still goes, alone, holding all of it.
        let small = DeliveryPermits(capacity: 100)
        let alone = try await processor.decidePart(decoded[0...], counted: [:], handled: [], permits: small)
        XCTAssertEqual(alone.taken, 1)
        XCTAssertEqual(alone.permits, 100)
        XCTAssertEqual(alone.outcome.deliveries.count, 400)
        small.release(alone.permits)
    }
}
