import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushTestSupport
import XCTest

/// Issue 15's proof, "no message can stop the fleet": hostile bytes through
/// the real pipeline (3-broker mock Kafka, the simulator, PostgreSQL, two
/// `pushfleet worker` processes) on every topic a worker consumes, each
/// followed by a valid canary with the same key on the same partition.
/// Asserts: no worker exits; every hostile message has exactly one fate
/// (delivery rows, or an intake rejection plus a dead letter pointing at it,
/// or an applied receipt / device event); every canary ends accepted or
/// applied; no batch loops in `retrying`; the workers exit 0 on SIGTERM.
/// FUZZ_MESSAGES (default 2,000 hostile messages), FUZZ_SEED (default 15), FUZZ_TIMEOUT_SECONDS
/// (default 300); FUZZ_CONTROL=1 leaves every message valid, to check the harness on its own.
final class FuzzTests: XCTestCase {
    func testNoMessageStopsTheFleet() async throws {
        var logger = Logger(label: "e2e.fuzz")
        logger.logLevel = .warning
        let env = ProcessInfo.processInfo.environment
        let count = env["FUZZ_MESSAGES"].flatMap(Int.init) ?? 2_000
        let seed = env["FUZZ_SEED"].flatMap(UInt64.init) ?? 15
        let adminURL = try TestEnvironment.databaseURL()
        let binary = try TestEnvironment.pushfleetBinary()
        let database = try await TestDatabase.create(adminURL: adminURL, logger: logger)
        let stack = try FuzzStack(binary: binary, database: database, hostile: count)
        var keep = false
        do {
            keep = try await fuzz(stack, count: count, seed: seed, logger: logger)
        } catch {
            keep = true
            print("fuzz: stack kept in \(stack.directory)")
            await stack.stopAll(keepDirectory: true)
            await database.drop(logger: logger)
            throw error
        }
        if keep { print("fuzz: logs kept in \(stack.directory)") }
        await stack.stopAll(keepDirectory: keep)
        await database.drop(logger: logger)
    }

    /// Returns whether the run failed (then its logs are kept).
    private func fuzz(_ stack: FuzzStack, count: Int, seed: UInt64, logger: Logger) async throws -> Bool {
        let started = ContinuousClock.now
        let partitions = Dictionary(uniqueKeysWithValues: stack.topicPartitions)
        let corpus = try FuzzCorpus(hostile: count, seed: seed, partitions: partitions, control: ProcessInfo.processInfo.environment["FUZZ_CONTROL"] == "1",
                                    webOrigin: stack.webOrigin)
        // The mock cluster keeps ~5 MiB per partition: a corpus beyond that would lose messages silently.
        var bytesPerPartition: [String: Int] = [:]
        for m in corpus.messages { bytesPerPartition["\(m.topic)/\(m.partition)", default: 0] += m.value.count + 100 }
        let fullest = bytesPerPartition.max { $0.value < $1.value }
        XCTAssertLessThan(fullest?.value ?? 0, 4 << 20, "corpus too large for the mock cluster's partition retention: \(fullest.map { "\($0)" } ?? "")")

        try await stack.start(workerCount: 2)
        let messages = try await produce(corpus.messages, bootstrap: stack.bootstrap, topics: stack.topicPartitions.map(\.0))
        let hostile = messages.filter { $0.role == .hostile }, canaries = messages.filter { $0.role == .canary }
        print("fuzz: produced \(hostile.count) hostile messages and \(canaries.count) canaries (seed \(seed)) in \((ContinuousClock.now - started).components.seconds) s")

        // Wait for the canaries (and the hostile messages' outcomes) in PostgreSQL, or a generous timeout.
        let c = try await PostgresConnection.connect(url: stack.database.url, logger: logger)
        defer { c.close() }
        let notificationCanaries = canaries.filter { FuzzCorpus.notificationTopics.contains($0.topic) }.compactMap { $0.planted.flatMap(UUID.init) }
        let receiptCanaries = canaries.filter { $0.topic == "push.receipts" }.compactMap { $0.planted.flatMap(UUID.init) }
        let deviceCanaries = canaries.filter { $0.topic == "push.devices" }.compactMap(\.planted)
        let timeout = Duration.seconds(env("FUZZ_TIMEOUT_SECONDS") ?? 300)
        var progress = (accepted: 0, receipts: 0, devices: 0)
        var settledAt: ContinuousClock.Instant?, firstExit: ContinuousClock.Instant?
        while ContinuousClock.now - started < timeout {
            let r = try await c.query(
                """
                SELECT (SELECT count(*) FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND status = 'accepted') AS accepted,
                       (SELECT count(DISTINCT notification_id) FROM delivery_receipts WHERE notification_id = ANY($2::uuid[])) AS receipts,
                       (SELECT count(DISTINCT token) FROM devices WHERE token = ANY($3::text[])) AS devices
                """, [.uuidArray(notificationCanaries), .uuidArray(receiptCanaries), .textArray(deviceCanaries)]).rows[0]
            progress = (r.count("accepted") ?? 0, r.count("receipts") ?? 0, r.count("devices") ?? 0)
            // A worker gone: keep watching a while, to see whether its partitions' poison takes the next one down too.
            if stack.workers.allSatisfy({ $0.exited() != nil }) { break }
            if stack.workers.contains(where: { $0.exited() != nil }) {
                if firstExit == nil { firstExit = .now }
                if let firstExit, ContinuousClock.now - firstExit > .seconds(20) { break }
            }
            let done = progress.accepted == notificationCanaries.count && progress.receipts == receiptCanaries.count
                && progress.devices == deviceCanaries.count
            // Canaries done: give batches still in flight before them a little longer, then account.
            if done, settledAt == nil { settledAt = .now }
            if let settledAt, ContinuousClock.now - settledAt > .seconds(5) { break }
            try await Task.sleep(for: .seconds(1))
        }
        let waited = (ContinuousClock.now - started).components.seconds

        // (a) no worker exited during the run.
        var failed = false
        for worker in stack.workers {
            if let status = worker.exited() {
                failed = true
                XCTFail("\(worker.name) exited with status \(status) during the run; last log lines:\n\(worker.log.suffix(6000))")
            }
        }

        // (b) every hostile message accounted for exactly once.
        let accounting = try await account(hostile, connection: c, bootstrap: stack.bootstrap)
        if !accounting.unaccounted.isEmpty {
            failed = true
            // The first message without an outcome on each partition is where that partition stopped.
            var firstPerPartition: [String: FuzzMessage] = [:]
            for m in accounting.unaccounted where (firstPerPartition["\(m.topic)/\(m.partition)"]?.offset ?? .max) > m.offset {
                firstPerPartition["\(m.topic)/\(m.partition)"] = m
            }
            let examples = firstPerPartition.values.sorted { $0.origin < $1.origin }.prefix(30)
                .map { "  \($0.origin) [\($0.mutation)] \(preview($0.value))" }
            XCTFail("\(accounting.unaccounted.count) hostile messages have no outcome (no rows, no rejection, no dead letter); "
                    + "the first on each partition:\n" + examples.joined(separator: "\n"))
        }
        if !accounting.rejectedWithoutDeadLetter.isEmpty {
            failed = true
            XCTFail("\(accounting.rejectedWithoutDeadLetter.count) rejected messages have no dead letter pointing at them: "
                    + accounting.rejectedWithoutDeadLetter.prefix(10).map(\.origin).joined(separator: ", "))
        }
        for (topic, n) in accounting.producedByTopic.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(accounting.fatesByTopic[topic, default: 0], n, "\(topic): outcomes + rejections == produced")
        }

        // (c) every canary ends accepted or applied.
        if progress.accepted < notificationCanaries.count || progress.receipts < receiptCanaries.count || progress.devices < deviceCanaries.count {
            failed = true
            let stuck = try await c.query(
                "SELECT status, count(*) AS n FROM deliveries WHERE notification_id = ANY($1::uuid[]) GROUP BY 1",
                [.uuidArray(notificationCanaries)]).rows.map { "\($0["status"] ?? "?")=\($0["n"] ?? "?")" }
            XCTFail("""
                canaries: notifications accepted \(progress.accepted)/\(notificationCanaries.count) (by status: \(stuck.joined(separator: ", "))), \
                receipts applied \(progress.receipts)/\(receiptCanaries.count), devices applied \(progress.devices)/\(deviceCanaries.count) after \(waited) s
                """)
        }

        // (d) no batch retried in a loop.
        for worker in stack.workers {
            let retrying = worker.log.split(separator: "\n").filter { $0.contains("retrying") }
            if retrying.count > 20 {
                failed = true
                XCTFail("\(worker.name) logged \(retrying.count) `retrying` lines (a message stuck in a retry loop):\n"
                        + retrying.prefix(3).map { String($0.prefix(600)) }.joined(separator: "\n"))
            }
        }

        // (e) exit 0 on SIGTERM.
        let logs = stack.workers.map { ($0.name, $0.log) }
        let exits = await stack.stopWorkers()
        for ((name, log), status) in zip(logs, exits) where status != 0 {
            failed = true
            XCTFail("\(name) exited \(status) after SIGTERM; last log lines:\n\(log.suffix(3000))")
        }

        let reasons = accounting.rejectionsByKind.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let canaryTotal = notificationCanaries.count + receiptCanaries.count + deviceCanaries.count
        print("fuzz: \(hostile.count) messages in, rejections by reason {\(reasons)}, "
              + "dead letters \(accounting.deadLetters) (duplicates \(accounting.duplicateDeadLetters)), "
              + "delivered or applied \(accounting.applied), unattributed \(accounting.unattributed), unaccounted \(accounting.unaccounted.count), "
              + "canaries delivered \(progress.accepted + progress.receipts + progress.devices)/\(canaryTotal), "
              + "worker exits \(exits.map(String.init).joined(separator: ",")), \((ContinuousClock.now - started).components.seconds) s")
        return failed
    }

    private func env(_ name: String) -> Int? { ProcessInfo.processInfo.environment[name].flatMap(Int.init) }

    /// Produces every message in order, per partition (one sequential sender
    /// per partition, all partitions at once), recording the offset each landed at.
    private func produce(_ messages: [FuzzMessage], bootstrap: String, topics: [String]) async throws -> [FuzzMessage] {
        var logger = Logger(label: "pushfleet.fuzz")
        logger.logLevel = .warning
        let producer = try KafkaProducer(bootstrapServers: bootstrap, properties: ["linger.ms": "0"], logger: logger)
        var byPartition: [String: [Int]] = [:]
        for (i, m) in messages.enumerated() { byPartition["\(m.topic)/\(m.partition)", default: []].append(i) }
        let offsets = try await withThrowingTaskGroup(of: [(Int, Int64)].self) { group in
            for indexes in byPartition.values {
                group.addTask {
                    var landed: [(Int, Int64)] = []
                    for i in indexes {
                        let m = messages[i]
                        let at = try await producer.send(topic: m.topic, key: m.key, value: m.value, partition: m.partition)
                        landed.append((i, at.offset))
                    }
                    return landed
                }
            }
            var all: [(Int, Int64)] = []
            for try await part in group { all += part }
            return all
        }
        await producer.close(timeout: .seconds(10))
        var out = messages
        for (i, offset) in offsets { out[i].offset = offset }
        return out
    }

    /// Every message on `topic`, read by assignment up to each partition's high watermark.
    private func readAll(_ topic: String, bootstrap: String) async throws -> [KafkaMessage] {
        var logger = Logger(label: "pushfleet.fuzz")
        logger.logLevel = .warning
        let reader = try KafkaConsumer(bootstrapServers: bootstrap, groupID: "fuzz-reader-\(UUID().uuidString.prefix(8))",
                                       topics: [topic], properties: ["fetch.wait.max.ms": "50"], logger: logger)
        var ends: [Int32: Int64] = [:]
        for p in 0..<Int32(try await reader.partitionCount(topic: topic)) {
            ends[p] = try await reader.watermarks(KafkaTopicPartition(topic: topic, partition: p)).high
        }
        var seen: [Int32: Int64] = [:]
        var all: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline, ends.contains(where: { (seen[$0.key] ?? 0) < $0.value }) {
            for m in try await reader.poll(maxMessages: 500, timeout: .milliseconds(200)) {
                all.append(m)
                seen[m.partition] = max(seen[m.partition] ?? 0, m.offset + 1)
            }
        }
        await reader.close(timeout: .seconds(5))
        return all
    }

    struct Accounting {
        var producedByTopic: [String: Int] = [:]
        var fatesByTopic: [String: Int] = [:]
        var rejectionsByKind: [String: Int] = [:]
        var applied = 0
        /// Valid after mutation but with the planted identity changed: applied under another key.
        var unattributed = 0
        var deadLetters = 0
        var duplicateDeadLetters = 0
        var unaccounted: [FuzzMessage] = []
        var rejectedWithoutDeadLetter: [FuzzMessage] = []
    }

    /// The fate of every hostile message, from PostgreSQL and the dead-letter topic's origin headers.
    private func account(_ hostile: [FuzzMessage], connection c: PostgresConnection, bootstrap: String) async throws -> Accounting {
        var rejections: [String: String] = [:]
        for row in try await c.query("SELECT kafka_topic, kafka_partition, kafka_offset, kind FROM intake_rejections").rows {
            rejections["\(row["kafka_topic"] ?? "")/\(row["kafka_partition"] ?? "")/\(row["kafka_offset"] ?? "")"] = row["kind"] ?? "?"
        }
        let deliveryIDs = Set(try await c.query("SELECT DISTINCT notification_id::text AS id FROM deliveries").rows.compactMap { $0["id"] })
        let receiptIDs = Set(try await c.query("SELECT DISTINCT notification_id::text AS id FROM delivery_receipts").rows.compactMap { $0["id"] })
        let tokens = Set(try await c.query("SELECT token FROM devices").rows.compactMap { $0["token"] })
        var dlq: [String: Int] = [:]
        for record in try await readAll("push.dlq", bootstrap: bootstrap) {
            func header(_ name: String) -> String { record.header(name).map { String(decoding: $0, as: UTF8.self) } ?? "?" }
            dlq["\(header("pushfleet-origin-topic"))/\(header("pushfleet-origin-partition"))/\(header("pushfleet-origin-offset"))", default: 0] += 1
        }
        var a = Accounting()
        a.deadLetters = dlq.values.reduce(0, +)
        a.duplicateDeadLetters = dlq.values.reduce(0) { $0 + max(0, $1 - 1) }
        for m in hostile {
            a.producedByTopic[m.topic, default: 0] += 1
            let rejectedKind = rejections[m.origin]
            let deadLettered = dlq[m.origin, default: 0] > 0
            if let kind = rejectedKind {
                a.rejectionsByKind[kind, default: 0] += 1
                if !deadLettered { a.rejectedWithoutDeadLetter.append(m) }
                a.fatesByTopic[m.topic, default: 0] += 1
                continue
            }
            if m.topic == "push.receipts", deadLettered {
                a.rejectionsByKind["receipt (dead-lettered)", default: 0] += 1
                a.fatesByTopic[m.topic, default: 0] += 1
                continue
            }
            let traced: Bool
            if FuzzCorpus.notificationTopics.contains(m.topic) {
                // The id survived, or the message still decodes (to another id): its rows must be there.
                traced = (m.plantedIntact && deliveryIDs.contains(m.planted ?? ""))
                    || (try? PushNotification.decode(m.value).get()).map { deliveryIDs.contains($0.id.uuidString.lowercased()) } == true
            } else if m.topic == "push.receipts" {
                traced = m.plantedIntact && receiptIDs.contains(m.planted ?? "")
            } else {
                traced = m.plantedIntact && tokens.contains(m.planted ?? "")
            }
            if traced {
                a.applied += 1
                a.fatesByTopic[m.topic, default: 0] += 1
            } else if !m.plantedIntact, m.topic == "push.receipts" || m.topic == "push.devices", !deadLettered {
                // Neither rejected nor dead-lettered, and its identity was mutated away: applied under a key we cannot predict.
                a.unattributed += 1
                a.fatesByTopic[m.topic, default: 0] += 1
            } else {
                a.unaccounted.append(m)
            }
        }
        return a
    }

    private func preview(_ bytes: [UInt8]) -> String {
        let head = bytes.prefix(160).map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
        return "(\(bytes.count) bytes) " + head
    }
}
