import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushSimulator
import PushTestSupport
import XCTest
@testable import PushWorker

/// The kill switch inside one worker, against real PostgreSQL and the
/// simulator: a cancelled campaign's deliveries end `cancelled` without a
/// request (when a part is decided, right before a send, instead of a retry
/// or a parked copy), the command's sweep and resume, and the ledger rule
/// that a send already under way wins over the sweep.
final class CampaignStopTests: XCTestCase {
    static let app = "com.example.campaigns"
    static let teamID = "TEAM0000CS"
    static let keyID = "KEYCAMP001"

    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    static func message(_ campaign: String?, tokens: [String], offset: Int64, topic: String = "push.notifications.bulk") -> KafkaMessage {
        var n = PushNotification(id: UUID(), app: app, createdAt: Date(), recipients: tokens.map { Recipient(token: $0, platform: .ios) },
                                 alert: .init(title: "t", body: "b"))
        n.campaign = campaign
        return KafkaMessage(topic: topic, partition: 0, offset: offset, key: nil, value: n.intakeJSON().encoded())
    }

    /// A pipeline sending to a simulator that plays APNs for `app`.
    struct Stack {
        let simulator: PushSimulator
        let router: ProviderRouter
        let db: MigratedDatabase
        let pool: PostgresPool
        let stores: WorkerStores
        let campaigns = CampaignStops()
        let directory: String

        var pipeline: BatchPipeline {
            let configuration = WorkerConfiguration()
            return BatchPipeline(
                stores: stores, router: router, producer: nil, permits: nil, topics: TopicNames(),
                retryPolicy: configuration.retry.policy, maxConcurrentSends: 8, counters: Locked(WorkerCounters()),
                observer: NoWorkerObserver(), logger: MigratedDatabase.logger, campaigns: campaigns)
        }

        static func start() async throws -> Stack {
            let key = DevCredentials.makeAPNsKey()
            let simulator = PushSimulator(
                configuration: SimulatorConfiguration(apnsKeys: [SimulatorAPNsKey(keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKeyPEM)]),
                logger: MigratedDatabase.logger)
            try await simulator.start()
            let directory = NSTemporaryDirectory() + "pushfleet-campaign-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try simulator.caCertificatePEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
            try key.privateKeyPEM.write(toFile: directory + "/key.p8", atomically: true, encoding: .utf8)
            var configuration = WorkerConfiguration()
            configuration.tls.caBundlePath = directory + "/ca.pem"
            configuration.apps[app] = .init(
                apns: .init(topic: app, teamID: teamID, keyID: keyID, keyPath: directory + "/key.p8",
                            baseURL: "https://127.0.0.1:\(simulator.port)"), fcm: nil)
            let db = try await MigratedDatabase.make()
            let pool = db.pool()
            return Stack(simulator: simulator, router: try ProviderRouter(configuration: configuration, logger: MigratedDatabase.logger),
                         db: db, pool: pool, stores: WorkerStores(pool: pool, logger: MigratedDatabase.logger), directory: directory)
        }

        func stop() async {
            router.shutdown()
            await pool.close()
            try? await simulator.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static let stop = CampaignStops.Stop(reason: "wrong text", by: "ops", at: Date(timeIntervalSince1970: 1_795_262_400))

    func testACancelledCampaignIsDecidedCancelledWithoutARequestAndTheRestIsSent() async throws {
        let stack = try await Stack.start()
        do {
            stack.campaigns.replace(with: ["spring": Self.stop])
            let outcome = try await stack.pipeline.outcome(of: [
                Self.message("spring", tokens: [Self.token(1), Self.token(2)], offset: 0),
                Self.message("autumn", tokens: [Self.token(3)], offset: 1),
                Self.message(nil, tokens: [Self.token(4)], offset: 2, topic: "push.notifications"),
            ])
            let byToken = Dictionary(uniqueKeysWithValues: outcome.deliveries.map { ($0.key.token, $0) })
            XCTAssertEqual(byToken[Self.token(1)]?.status, .cancelled)
            XCTAssertEqual(byToken[Self.token(2)]?.status, .cancelled)
            XCTAssertEqual(byToken[Self.token(1)]?.providerReason, "CampaignCancelled")
            XCTAssertEqual(byToken[Self.token(1)]?.detail, "campaign spring cancelled by ops at 2026-11-21T12:00:00.000Z: wrong text")
            XCTAssertEqual(byToken[Self.token(1)]?.attempts, 0)
            XCTAssertEqual(byToken[Self.token(3)]?.status, .accepted)
            XCTAssertEqual(byToken[Self.token(4)]?.status, .accepted)
            XCTAssertEqual(stack.simulator.stats().apnsAccepted, 2, "no request for the cancelled campaign")

            // Written, every row carries its campaign, and so does the attempts view.
            try await stack.stores.writer.write(outcome)
            let rows = try await stack.db.connection.query("SELECT token, campaign, status FROM deliveries ORDER BY token")
            XCTAssertEqual(rows.rows.map { $0["campaign"] ?? "-" }, ["spring", "spring", "autumn", "-"])
            let attempts = try await stack.db.row("SELECT string_agg(COALESCE(campaign, '-'), ',' ORDER BY token) AS c FROM delivery_attempts")
            XCTAssertEqual(attempts["c"], "autumn,-", "the attempts view shows the campaign")
            // A resume lets what comes next go.
            stack.campaigns.replace(with: [:])
            let resumed = try await stack.pipeline.outcome(of: [Self.message("spring", tokens: [Self.token(5)], offset: 3)])
            XCTAssertEqual(resumed.deliveries.map(\.status), [.accepted])
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    /// A part's sends can take seconds: one whose campaign was cancelled after
    /// the part was decided is not sent, and one that failed or could not be
    /// sent meanwhile ends `cancelled` instead of going to a retry tier or a
    /// parked topic.
    func testASendOrRetryOfACampaignCancelledAfterTheDecisionIsStopped() async throws {
        let stack = try await Stack.start()
        do {
            let pipeline = stack.pipeline
            let n = try PushNotification.decode(Self.message("spring", tokens: [Self.token(1)], offset: 0).value).get()
            let gate = try XCTUnwrap(stack.campaigns.gate(for: "spring"))
            let source = WorkItem.Source(notification: n, enqueuedAt: nil, headers: RetryHeaders(), sourceKey: nil, gate: gate)
            let item = WorkItem(source: source, recipient: n.recipients[0],
                                key: DeliveryKey(notificationID: n.id, token: Self.token(1), createdAt: n.createdAt))
            let clients = try XCTUnwrap(stack.router.clients(for: Self.app))
            let request = try n.request(for: n.recipients[0], context: clients.context).get()
            XCTAssertNil(gate.closedReason)
            stack.campaigns.replace(with: ["spring": Self.stop])
            XCTAssertNotNil(gate.closedReason, "the refresh closes the gate a message in flight holds")
            let sent = await pipeline.sender.deliver(item, request, clients)
            XCTAssertEqual(sent.deliveries.map(\.status), [.cancelled])
            XCTAssertEqual(stack.simulator.stats().apnsAccepted, 0)

            var outcome = BatchOutcome()
            outcome.retryNeeds = [RetryNeed(item: item, reason: "Unavailable", providerStatus: 503, retryAfter: nil, attempts: 1,
                                            firstAttemptAt: Date(), lastAttemptAt: Date())]
            outcome.held = [HeldDelivery(item: item, reason: "CircuitOpen", retryAfter: nil, party: HeldParty(provider: .apns, app: Self.app),
                                         credential: false)]
            pipeline.retries.schedule(&outcome)
            XCTAssertTrue(outcome.outgoing.isEmpty, "no retry or parked copy of a cancelled campaign's delivery")
            XCTAssertEqual(outcome.deliveries.map(\.status), [.cancelled, .cancelled])
            XCTAssertEqual(outcome.deliveries.map(\.attempts), [1, 0], "the attempt made is counted")
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    func record(_ token: String, _ status: DeliveryStatus, campaign: String?, id: UUID, at: Date, attempts: Int = 0) -> DeliveryRecord {
        DeliveryRecord(key: DeliveryKey(notificationID: id, token: token, createdAt: at), app: Self.app, platform: .ios, status: status,
                       attempts: attempts, providerStatus: nil, providerReason: nil, providerMessageID: nil, detail: nil,
                       finalAt: status.isFinal ? at : nil, campaign: campaign)
    }

    /// `campaign cancel` moves the campaign's not-final rows to `cancelled`
    /// (only those, only its own), workers read it, `resume` closes it and
    /// keeps the history; a send already under way when the sweep ran keeps
    /// its answer, a retry does not undo the cancel.
    func testCancelSweepsTheLedgerAndResumeKeepsWhatWasCancelled() async throws {
        let db = try await MigratedDatabase.make()
        let pool = db.pool()
        defer { Task { await pool.close() } }
        let writer = WorkerStores(pool: pool, logger: MigratedDatabase.logger).writer
        let id = UUID(), at = Date()
        try await writer.write(BatchOutcome(deliveries: [
            record("a", .pending, campaign: "spring", id: id, at: at), record("b", .retrying, campaign: "spring", id: id, at: at),
            record("c", .parked, campaign: "spring", id: id, at: at), record("d", .accepted, campaign: "spring", id: id, at: at),
            record("e", .retrying, campaign: "autumn", id: id, at: at), record("f", .retrying, campaign: nil, id: id, at: at),
        ]))
        let c = db.connection
        let first = try await CampaignCancellations.cancel("spring", reason: "wrong text", by: "ops", on: c)
        XCTAssertTrue(first.isNew)
        XCTAssertEqual(first.deliveriesCancelled, 3)
        let statuses = try await c.query("SELECT token, status, provider_reason, detail FROM deliveries ORDER BY token").rows
        XCTAssertEqual(statuses.map { $0["status"] ?? "" }, ["cancelled", "cancelled", "cancelled", "accepted", "retrying", "retrying"])
        XCTAssertEqual(statuses[0]["provider_reason"], "CampaignCancelled")
        XCTAssertEqual(statuses[0]["detail"], first.record.stop.detail(campaign: "spring"))
        XCTAssertTrue(statuses[0]["detail"]?.hasPrefix("campaign spring cancelled by ops at ") == true)
        let open = try await CampaignCancellations.open(on: c)
        XCTAssertEqual(open.keys.sorted(), ["spring"])

        let again = try await CampaignCancellations.cancel("spring", reason: "other", by: "someone", on: c)
        XCTAssertFalse(again.isNew)
        XCTAssertEqual(again.record.stop.by, "ops", "the first cancellation stays")
        XCTAssertEqual(again.deliveriesCancelled, 0)

        // A send under way when the sweep ran wins (what the provider answered is what happened);
        // a failed one does not bring the row back to retrying.
        try await writer.write(BatchOutcome(deliveries: [
            record("a", .accepted, campaign: "spring", id: id, at: at, attempts: 1),
            record("b", .retrying, campaign: "spring", id: id, at: at, attempts: 1),
            record("c", .accepted, campaign: "spring", id: id, at: at, attempts: 0),
        ]))
        let after = try await c.query("SELECT token, status FROM deliveries WHERE campaign = 'spring' ORDER BY token").rows
        XCTAssertEqual(after.map { $0["status"] ?? "" }, ["accepted", "cancelled", "cancelled", "accepted"])

        let resumed = try await CampaignCancellations.resume("spring", by: "ops2", on: c)
        XCTAssertEqual(resumed?.resumedBy, "ops2")
        let twice = try await CampaignCancellations.resume("spring", by: "ops2", on: c)
        XCTAssertNil(twice, "nothing open to resume")
        let none = try await CampaignCancellations.open(on: c)
        XCTAssertTrue(none.isEmpty)
        let history = try await CampaignCancellations.history("spring", on: c)
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.first?.deliveriesCancelled, 3)
        let kept = try await db.row("SELECT count(*) AS n FROM deliveries WHERE status = 'cancelled'")
        XCTAssertEqual(kept["n"], "2", "a resume does not bring cancelled rows back")
        // A later cancel opens a new one.
        let later = try await CampaignCancellations.cancel("spring", reason: nil, by: "ops", on: c)
        XCTAssertTrue(later.isNew)
        let both = try await CampaignCancellations.history("spring", on: c)
        XCTAssertEqual(both.count, 2)
    }

    func testGatesFollowTheCancelledSetAndAreForgottenWhenNothingHoldsThem() {
        let stops = CampaignStops()
        XCTAssertFalse(stops.isLoaded)
        XCTAssertNil(stops.gate(for: nil), "no campaign, no gate")
        var held = stops.gate(for: "spring")
        _ = stops.gate(for: "autumn")
        XCTAssertTrue(held === stops.gate(for: "spring"), "one gate per campaign")
        XCTAssertEqual(stops.gateCount, 2)
        let change = stops.replace(with: ["spring": Self.stop, "winter": Self.stop])
        XCTAssertEqual(change.cancelled, ["spring", "winter"])
        XCTAssertTrue(stops.isLoaded)
        XCTAssertEqual(held?.closedReason, Self.stop.detail(campaign: "spring"))
        XCTAssertEqual(stops.gateCount, 1, "autumn's gate, held by nothing, is forgotten; spring's is held")
        XCTAssertNotNil(stops.gate(for: "winter")?.closedReason, "a gate made later starts closed")
        XCTAssertEqual(stops.replace(with: [:]).resumed, ["spring", "winter"])
        XCTAssertNil(held?.closedReason, "a resume opens it")
        held = nil
        stops.replace(with: [:])
        XCTAssertEqual(stops.gateCount, 0)
    }
}
