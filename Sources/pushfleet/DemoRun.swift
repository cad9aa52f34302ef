import PushAnalytics
import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushProducer
import PushProviders
import PushSimulator
import PushWorker

/// One end-to-end run of the local stack. Owns the simulator, the mock
/// cluster and the worker processes, and always stops them.
struct DemoRun {
    let directory: String
    let databaseURL: String
    let logger: Logger
    var generator: DemoGenerator
    let faults: DemoFaults
    let load: DemoLoad

    static let app = "com.pushfleet.demo"
    /// The app whose campaign runs on the bulk lane (same team and project as the demo app).
    static let campaignApp = "com.pushfleet.news"
    /// An app of another team whose APNs key the simulator refuses: Apple no longer knows it.
    static let refusedKeyApp = "com.pushfleet.legacy"
    static let refusedKeyTeamID = "LEGACYTM01"
    static let refusedKeyKeyID = "LEGACYKEY1"
    /// The demo's topics: the default prefix and tiers, as the workers it starts use.
    static let topics = TopicNames()
    static let teamID = "DEMOTEAM01"
    static let keyID = "DEMOKEY001"
    static let projectID = "pushfleet-demo"
    static let hmsAppID = "106950123"
    static let hmsSecret = "pushfleet-demo-hms-secret"

    init(directory: String, databaseURL: String, logger: Logger, seed: UInt64, faults: DemoFaults, load: DemoLoad = DemoLoad()) {
        self.faults = faults
        self.load = load
        self.directory = directory
        self.databaseURL = databaseURL
        self.logger = logger
        self.generator = DemoGenerator(seed: seed)
    }

    /// Runs the demo and returns its result with the stack it ran on, still up: the caller shuts it down.
    mutating func run(notifications: Int, workers: Int, partitions: Int32, timeout: Duration) async throws -> (DemoResult, DemoStack) {
        // Every row of this run has a created_at from here on.
        let since = Date()
        // Credentials, as Apple and Google hand them out.
        let apnsKey = DevCredentials.makeAPNsKey()
        let account = try DevCredentials.makeServiceAccount(
            projectID: Self.projectID, clientEmail: "pushfleet-demo@\(Self.projectID).iam.gserviceaccount.com",
            tokenURI: "https://127.0.0.1/token")
        // The refused-key app signs with a key whose public half Apple (the simulator) does not have.
        let refusedKey = DevCredentials.makeAPNsKey()
        let keyApple = DevCredentials.makeAPNsKey()

        let vapidKey = DevCredentials.makeAPNsKey()  // a P-256 key pair, as VAPID signs with
        let webInbox = SimulatorWebPushInbox()
        var apnsKeys = [SimulatorAPNsKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: apnsKey.publicKeyPEM,
                                         topics: [Self.app] + (load.bulkBacklog > 0 ? [Self.campaignApp] : []))]
        if load.refusedKeyNotifications > 0 {
            apnsKeys.append(SimulatorAPNsKey(keyID: Self.refusedKeyKeyID, teamID: Self.refusedKeyTeamID,
                                             publicKeyPEM: keyApple.publicKeyPEM, topics: [Self.refusedKeyApp]))
        }
        var simulatorConfiguration = SimulatorConfiguration(
            apnsKeys: apnsKeys,
            fcmAccounts: [SimulatorFCMAccount(clientEmail: "pushfleet-demo@\(Self.projectID).iam.gserviceaccount.com",
                                              privateKeyID: account.privateKeyID, projectID: Self.projectID, publicKeyPEM: account.publicKeyPEM)],
            scenarios: load.publishRate == nil ? faults.scenarios : [], webPushInbox: webInbox,
            hmsApps: [SimulatorHMSApp(appID: Self.hmsAppID, clientSecret: Self.hmsSecret)])
        // The push service takes only the demo app's VAPID key, as a browser's subscription binds one.
        simulatorConfiguration.webPushVAPIDKeys = [try VAPIDSigner(privateKeyPEM: vapidKey.privateKeyPEM, subject: "mailto:demo@pushfleet.invalid").publicKeyBase64URL]
        let simulator = PushSimulator(configuration: simulatorConfiguration, logger: logger)
        try await simulator.start()
        // The batch to send (browsers subscribed at the simulator), with the simulator told which tokens are dead.
        let batch = generator.makeBatch(count: notifications, app: Self.app, webOrigin: "https://127.0.0.1:\(simulator.port)",
                                        fcmAlwaysFails: faults.fcmAlways503)
        for (token, since) in batch.deadTokens { simulator.markDead(token: token, since: since) }
        let campaign = load.bulkBacklog > 0 ? generator.makeCampaign(count: load.bulkBacklog, app: Self.campaignApp) : nil
        let refused = load.refusedKeyNotifications > 0
            ? generator.makeRefusedKeyBatch(count: load.refusedKeyNotifications, app: Self.refusedKeyApp) : nil
        var all = batch
        for other in [campaign, refused].compactMap({ $0 }) { all.expect(other) }
        let fleet = WorkerFleet(start: { [self] index in try self.startWorker(index: index) })
        do {
            let cluster = try KafkaMockCluster(brokers: 3, logger: logger)
            let bulkPartitions = load.bulkIntakePartitions(default: partitions)
            let partitionCount = { (topic: String) -> Int32 in
                topic == Self.topics.interactive.intake ? partitions : topic == Self.topics.bulk.intake ? bulkPartitions : 3
            }
            for topic in Self.topics.all { try cluster.createTopic(topic, partitions: partitionCount(topic)) }
            try writeFiles(apnsKeyPEM: apnsKey.privateKeyPEM, refusedKeyPEM: refusedKey.privateKeyPEM, vapidKeyPEM: vapidKey.privateKeyPEM,
                           serviceAccountJSON: account.json, tokenURI: simulator.tokenURI, simulator: simulator,
                           bootstrap: cluster.bootstrapServers)
            say("local stack: kafka \(cluster.bootstrapServers) (3 brokers, push.notifications × \(partitions)\(campaign == nil ? "" : ", push.notifications.bulk × \(bulkPartitions)")), simulator https://127.0.0.1:\(simulator.port), postgres \(redacted(databaseURL))")

            let migrated = try await MigrateCommand.migrate(url: databaseURL, migrations: try migrationsToApply(nil), logger: logger)
            say("migrations applied: \(migrated.isEmpty ? "none needed" : migrated.joined(separator: ", "))")

            var chaos = faults.chaos ? DemoChaos() : nil
            let receipts = try DemoReceipts(bootstrap: cluster.bootstrapServers, logger: logger)
            var timeline: DemoTimeline?
            let progress: Double
            do {
                if let rate = load.publishRate {
                    let consumed = Lane.allCases.flatMap { Self.topics.consumed(by: $0) }.reduce(0) { $0 + Int(partitionCount($1)) }
                    (timeline, progress) = try await runSteady(
                        rate: rate, batch: batch, campaign: campaign, refused: refused, all: all, since: since, workers: workers,
                        partitions: consumed, fleet: fleet, cluster: cluster, simulator: simulator, receipts: receipts,
                        chaos: &chaos, timeout: timeout)
                } else {
                    let enqueueStart = ContinuousClock.now
                    try await DemoTraffic.publishAll(batch.messages, topic: Self.topics.intake, bootstrap: cluster.bootstrapServers, logger: logger)
                    say("enqueued \(batch.messages.count) messages (\(batch.expectedDeliveries) deliveries, \(batch.expectedRejections) invalid messages) in \(format(ContinuousClock.now - enqueueStart))")
                    try fleet.launch(count: workers)
                    // A timed outage starts now, with the workers, not when the simulator started.
                    if let seconds = faults.fcmOutageSeconds {
                        try simulator.setScenarios(faults.scenarios)
                        var outage = DemoTimeline()
                        outage.outage = DateInterval(start: Date().addingTimeInterval(faults.fcmOutageStartSeconds), duration: seconds)
                        timeline = outage
                    }
                    say("started \(workers) worker processes (logs in \(directory))")
                    progress = try await waitForOutcomes(all, since: since, receiptIDs: batch.notificationIDs, timeout: timeout,
                                                         fleet: fleet, chaos: &chaos, cluster: cluster, receipts: receipts)
                }
            } catch {
                chaos?.finish(cluster: cluster)
                await receipts.close()
                throw error
            }
            chaos?.finish(cluster: cluster)
            await receipts.close()
            let shares = load.fcmFleetQuota == nil ? [:] : await DemoWorkerMetrics(directory: directory, logger: logger).quotaShares()
            let exitCodes = await fleet.stopAll()
            var result = try await readResult(all, receiptIDs: batch.notificationIDs, receipts: receipts)
            result.workerExitCodes = exitCodes
            result.chaosLog = chaos?.log ?? []
            result.secondsToFinal = progress
            result.simulatorStats = simulator.stats()
            result.webPushDecrypted = webInbox.deliveries.count
            result.expectedWebAccepted = batch.expectedWebAccepted
            result.deadLetters = try await countDeadLetters(bootstrap: cluster.bootstrapServers)
            result.retryMessages = try await DemoFigures.produced(to: Self.topics.retryTopics, partitions: partitionCount,
                                                                  bootstrap: cluster.bootstrapServers, logger: logger)
            result.parked = try await DemoFigures.parked(topics: Self.topics, partitions: partitionCount,
                                                         bootstrap: cluster.bootstrapServers, logger: logger)
            result.quotaShares = shares
            result.timeline = timeline
            try await readFigures(into: &result, timeline: timeline, since: since, campaign: campaign)
            return (result, DemoStack(cluster: cluster, simulator: simulator, directory: directory, databaseURL: databaseURL))
        } catch {
            _ = await fleet.stopAll()
            try? await simulator.shutdown()
            throw error
        }
    }

    private func writeFiles(apnsKeyPEM: String, refusedKeyPEM: String, vapidKeyPEM: String, serviceAccountJSON: String,
                            tokenURI: String, simulator: PushSimulator, bootstrap: String) throws {
        let keyPath = directory + "/AuthKey_\(Self.keyID).p8"
        let refusedKeyPath = directory + "/AuthKey_\(Self.refusedKeyKeyID).p8"
        let vapidPath = directory + "/vapid-private.pem"
        let hmsSecretPath = directory + "/hms-client-secret"
        try write(vapidKeyPEM, vapidPath)
        try write(Self.hmsSecret, hmsSecretPath)
        let accountPath = directory + "/service-account.json"
        let caPath = directory + "/simulator-ca.pem"
        let configPath = directory + "/worker.json"
        try write(apnsKeyPEM, keyPath)
        // The service account names the simulator's token endpoint, as a real one names Google's.
        var account = try JSONValue.parse(Array(serviceAccountJSON.utf8))
        if case .object(var members) = account, let i = members.firstIndex(where: { $0.key == "token_uri" }) {
            members[i].value = .string(tokenURI)
            account = .object(members)
        }
        try write(String(decoding: account.encoded(), as: UTF8.self), accountPath)
        try write(simulator.caCertificatePEM, caPath)
        let base = "https://127.0.0.1:\(simulator.port)"
        func apns(_ topic: String, team: String, key: String, path: String) -> JSONValue {
            .object([("topic", .string(topic)), ("team_id", .string(team)), ("key_id", .string(key)),
                     ("key_path", .string(path)), ("base_url", .string(base))])
        }
        var fcm: [(key: String, value: JSONValue)] = [("service_account_path", .string(accountPath)), ("base_url", .string(base))]
        if let quota = load.fcmFleetQuota { fcm.append(("fleet_rate_limit_per_second", .int(Int64(quota)))) }
        var apps: [(key: String, value: JSONValue)] = [
            (Self.app, .object([
                ("apns", apns(Self.app, team: Self.teamID, key: Self.keyID, path: keyPath)),
                ("fcm", .object(fcm)),
                ("webpush", .object([("vapid_private_key_path", .string(vapidPath)), ("subject", .string("mailto:demo@pushfleet.invalid")),
                                     // The simulator stands in for the browsers' push services.
                                     ("allowed_hosts", .array([.string("127.0.0.1")]))])),
                ("hms", .object([
                    ("app_id", .string(Self.hmsAppID)), ("client_secret_path", .string(hmsSecretPath)),
                    ("base_url", .string(base)), ("token_url", .string(base + "/oauth2/v3/token")),
                ])),
            ])),
        ]
        if load.bulkBacklog > 0 {
            // Same team key and Firebase project as the demo app: a second app of the same company.
            apps.append((Self.campaignApp, .object([
                ("apns", apns(Self.campaignApp, team: Self.teamID, key: Self.keyID, path: keyPath)),
                ("fcm", .object([("service_account_path", .string(accountPath)), ("base_url", .string(base))])),
            ])))
        }
        if load.refusedKeyNotifications > 0 {
            try write(refusedKeyPEM, refusedKeyPath)
            apps.append((Self.refusedKeyApp, .object([
                ("apns", apns(Self.refusedKeyApp, team: Self.refusedKeyTeamID, key: Self.refusedKeyKeyID, path: refusedKeyPath)),
            ])))
        }
        let config: JSONValue = .object([
            ("kafka", .object([
                ("bootstrap_servers", .string(bootstrap)), ("group_id", .string("pushfleet-demo")),
                ("topic_prefix", .string(Self.topics.prefix)),
                // A killed worker's partitions move after 6 s instead of librdkafka's 45 s default.
                ("properties", .object([("session.timeout.ms", .string("6000")), ("heartbeat.interval.ms", .string("500"))]
                    + MockBrokerFetch.properties.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ])),
            ("database", .object([("url", .string(databaseURL)), ("pool_size", .int(4))])),
            ("tls", .object([("ca_bundle", .string(caPath))])),
            ("retry", faults.retryConfig),
            ("worker", faults.workerConfig ?? .object([])),
            // Several workers on one host: each takes a free port for /metrics and /health.
            ("observability", .object([("listen", .string("127.0.0.1:0"))])),
            ("logging", .object([("format", .string("text"))])),
            ("apps", .object(apps)),
        ])
        try write(String(decoding: config.encoded(), as: UTF8.self), configPath)
    }

    private func write(_ text: String, _ path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private func startWorker(index: Int) throws -> Process {
        let config = directory + "/worker.json"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = ["worker", "--config", config]
        var env = ProcessInfo.processInfo.environment
        env["PUSHFLEET_WORKER_ID"] = "demo-worker-\(index)"
        env["PUSHFLEET_EXIT_WITH_PARENT"] = "1"
        // The config file is the truth for this run; drop overrides inherited from the caller.
        for key in env.keys where key.hasPrefix("PUSHFLEET_") && key != "PUSHFLEET_WORKER_ID" && key != "PUSHFLEET_LOG_LEVEL" && key != "PUSHFLEET_EXIT_WITH_PARENT" {
            env[key] = nil
        }
        process.environment = env
        let logPath = directory + "/worker-\(index).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        return process
    }

    /// Polls PostgreSQL until every expected delivery is final and every
    /// invalid message is recorded, printing a progress line. Returns the seconds it took.
    /// `batch` holds every app's expectations; its rows are the ones created
    /// since `since`. The apps publish receipts for `receiptIDs` (the demo
    /// app's interactive notifications; a campaign's are not waited on).
    func waitForOutcomes(_ batch: DemoBatch, since: Date, receiptIDs ids: [UUID], timeout: Duration, fleet: WorkerFleet,
                                 chaos: inout DemoChaos?, cluster: KafkaMockCluster,
                                 receipts: DemoReceipts) async throws -> Double {
        var connection: PostgresConnection?
        defer { connection?.close() }
        let start = ContinuousClock.now
        var lastFinal = 0
        var lastTick = start
        var lastPrinted = start
        var parkedSeen = false
        while true {
            var final = lastFinal
            var rejected = 0
            var parked = 0
            var landed = (delivered: 0, opened: 0)
            do {
                if connection == nil || connection?.isBroken == true {
                    connection?.close()
                    connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
                }
                let rows = try await connection?.query(
                    """
                    SELECT count(*) FILTER (WHERE status NOT IN ('pending', 'retrying', 'parked')) AS final,
                           count(*) FILTER (WHERE status = 'parked') AS parked,
                           (SELECT count(*) FROM intake_rejections WHERE kafka_topic = $3) AS rejected
                    FROM deliveries WHERE created_at >= $1 AND app = ANY($2::text[])
                    """, [.timestamp(since), .textArray(batch.apps.sorted()), .text(Self.topics.intake)])
                final = rows?.rows.first?.count("final") ?? 0
                parked = rows?.rows.first?.count("parked") ?? 0
                rejected = rows?.rows.first?.count("rejected") ?? 0
                // The apps' part: receipts for what was accepted since the last tick.
                if let connection {
                    try await receipts.publishNew(on: connection, ids: ids, app: Self.app)
                    landed = try await receipts.landed(on: connection, ids: ids)
                }
            } catch {
                // PostgreSQL away (e.g. the chaos restart): try again next tick.
                connection?.close()
                connection = nil
            }
            let now = ContinuousClock.now
            let rate = Double(final - lastFinal) / max((now - lastTick).seconds, 0.001)
            lastFinal = final
            lastTick = now
            let done = final >= batch.expectedDeliveries && rejected >= batch.expectedRejections
                && landed.delivered == receipts.publishedDelivered && landed.opened == receipts.publishedOpened
            parkedSeen = parkedSeen || parked > 0
            let line = String(format: "  final %d / %d deliveries, %.0f/s, in flight %d%@ | invalid messages %d / %d | receipts landed: delivered %d / %d, opened %d / %d",
                              final, batch.expectedDeliveries, rate, max(0, batch.expectedDeliveries - final),
                              parkedSeen ? " (parked now \(parked))" : "",
                              rejected, batch.expectedRejections, landed.delivered, receipts.publishedDelivered,
                              landed.opened, receipts.publishedOpened)
            if isatty(STDOUT_FILENO) == 1 {
                say("\r" + line + "   ", terminator: done ? "\n" : "")
            } else if done || (now - lastPrinted) >= .seconds(2) {
                say(line)
                lastPrinted = now
            }
            if done { return (now - start).seconds }
            if now - start > timeout {
                throw CommandFailure("timed out after \(timeout) with \(final)/\(batch.expectedDeliveries) deliveries final")
            }
            if !fleet.anyRunning {
                throw CommandFailure("every worker process exited before the work was done (logs in \(directory))")
            }
            if chaos != nil {
                await chaos?.step(progress: Double(final) / Double(max(1, batch.expectedDeliveries)), fleet: fleet,
                                  cluster: cluster, restartPostgres: restartThrowawayPostgres)
            }
            try await Task.sleep(for: .milliseconds(chaos == nil ? 500 : 200))
        }
    }

    /// Reads every message on the dead-letter topic to its end (by
    /// assignment, joining no group) and counts them by kind.
    private func countDeadLetters(bootstrap: String) async throws -> [String: Int] {
        let reader = try KafkaPartitionReader(bootstrapServers: bootstrap, groupID: "demo-dlq-reader-\(UUID().uuidString)", logger: logger)
        var counts: [String: Int] = [:]
        var seen = Set<String>()
        var duplicates = 0
        do {
            try await reader.scan(topic: Self.topics.deadLetter) { messages in
                for m in messages {
                    // At least once: a batch replayed after a crash can dead-letter a message twice;
                    // count each original message once (by its origin headers).
                    let headers = RetryHeaders(message: m)
                    let origin = "\(headers.originTopic ?? m.topic)/\(headers.originPartition ?? m.partition)/\(headers.originOffset ?? m.offset)"
                    guard seen.insert(origin).inserted else { duplicates += 1; continue }
                    let reason = headers.reason ?? "?"
                    let kind = reason.hasPrefix("retries exhausted") ? "exhausted" : String(reason.prefix(while: { $0 != ":" }))
                    counts[kind, default: 0] += 1
                }
                return true
            }
        } catch {
            await reader.close()
            throw error
        }
        await reader.close()
        if duplicates > 0 { counts["duplicate"] = duplicates }
        return counts
    }

    private func readResult(_ batch: DemoBatch, receiptIDs: [UUID], receipts: DemoReceipts) async throws -> DemoResult {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let ids = batch.notificationIDs
        let byStatus = try await connection.query(
            "SELECT platform, status, count(*) AS n FROM deliveries WHERE notification_id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2",
            [.uuidArray(ids)])
        var actual: [String: Int] = [:]
        for row in byStatus.rows {
            actual["\(row["platform"] ?? "?")|\(row["status"] ?? "?")"] = row.count("n") ?? 0
        }
        let invalidated = try await connection.query(
            "SELECT token FROM devices WHERE app = $1 AND invalidated_at IS NOT NULL AND token = ANY($2::text[])",
            [.text(DemoRun.app), .textArray(batch.expectedInvalidTokens)])
        let rejections = try await connection.query(
            "SELECT kind, count(*) AS n FROM intake_rejections GROUP BY kind ORDER BY kind")
        var rejectionCounts: [String: Int] = [:]
        for row in rejections.rows { rejectionCounts[row["kind"] ?? "?"] = row.count("n") ?? 0 }
        let missing = try await connection.query(
            """
            SELECT count(*) AS n FROM unnest($1::uuid[], $2::text[]) AS e(n, t)
            WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.notification_id = e.n AND d.token = e.t)
            """,
            [.uuidArray(batch.expectedKeys.map(\.0)), .textArray(batch.expectedKeys.map(\.1))])
        let landed = try await receipts.landed(on: connection, ids: receiptIDs)
        let funnel = try await ReportQueries.funnel(on: connection, since: Date().addingTimeInterval(-2 * 3600), app: DemoRun.app)
        return DemoResult(
            expected: receipts.adjust(batch.expectedCounts), actual: actual,
            deadTokens: batch.expectedInvalidated, invalidatedTokens: invalidated.rows.count,
            expectedRejections: batch.expectedRejections, rejections: rejectionCounts,
            missingDeliveries: missing.rows.first?.count("n") ?? -1,
            expectedExhausted: batch.expectedExhaustedNotifications,
            receiptsPublished: (receipts.publishedDelivered, receipts.publishedOpened), receiptsLanded: landed, funnel: funnel)
    }

    private func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(url)" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "(url)"
    }
}

func format(_ d: Duration) -> String { String(format: "%.1f s", d.seconds) }

extension PostgresRow {
    /// A count column as Int (nil when NULL or not a number).
    func count(_ column: String) -> Int? { self[column].flatMap { Int($0) } }
}
