import Foundation
import PushCore
import PushTestSupport

/// One message of the fuzz run: a hostile one, or the valid canary that follows it.
struct FuzzMessage: Sendable {
    enum Role: Sendable { case hostile, canary }
    var topic: String
    var partition: Int32
    var key: [UInt8]?
    var value: [UInt8]
    var role: Role
    var mutation: String
    /// The identity planted before mutating, to find the message's outcome:
    /// notification id (intake and retry topics), receipt notification id, or device token.
    var planted: String?
    /// Where it landed (set once produced).
    var offset: Int64 = -1

    var origin: String { "\(topic)/\(partition)/\(offset)" }

    /// Whether the planted identity survived the mutation byte for byte.
    var plantedIntact: Bool {
        guard let planted else { return false }
        let needle = Array("\"\(planted)\"".utf8)
        guard needle.count <= value.count else { return false }
        return value.withUnsafeBufferPointer { v in
            (0...(v.count - needle.count)).contains { i in needle.indices.allSatisfy { v[i + $0] == needle[$0] } }
        }
    }
}

/// The fuzz corpus: hostile variants of every valid example (notifications,
/// receipts, device events), random bytes and near-maximum-size messages, on
/// every topic a worker consumes, each followed by a canary with the same
/// key on the same partition. Deterministic for a seed.
struct FuzzCorpus {
    static let names = TopicNames()
    /// Both lanes' intake, retry and parked topics.
    static let notificationTopics = names.interactive.all + names.bulk.all
    /// Of every 25 hostile messages: 9 interactive intake, 1 per interactive retry tier, 1 parked,
    /// 2 bulk intake, 1 on a bulk retry tier, 1 bulk parked, 3 devices, 5 receipts.
    static let topicCycle = Array(repeating: names.intake, count: 9) + names.interactive.retryTopics + [names.interactive.parked]
        + Array(repeating: names.bulk.intake, count: 2) + [names.bulk.retries[1].topic, names.bulk.parked]
        + Array(repeating: names.devices, count: 3) + Array(repeating: names.receipts, count: 5)

    var messages: [FuzzMessage] = []
    private var rng: FuzzRandom
    private var nextPartition: [String: Int32] = [:]
    private let partitions: [String: Int]
    private let now = Timestamps.format(Date())

    static let schemas = TestEnvironment.schemasDirectory.appendingPathComponent("examples")

    static func examples(_ kind: String) throws -> [[UInt8]] {
        let dir = schemas.appendingPathComponent(kind)
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { Array(try Data(contentsOf: $0)) }
    }

    /// `control`: the same shape with every "hostile" message left valid (the harness checked on its own).
    /// `webOrigin`: where the examples' browser subscriptions (`https://push.example.net/wp/…`) are pointed.
    init(hostile count: Int, seed: UInt64, partitions: [String: Int], control: Bool = false, webOrigin: String? = nil) throws {
        rng = FuzzRandom(seed: seed)
        self.partitions = partitions
        // The examples' own times age out of the worker's created_at window (28 days): move
        // them to now, so the mutants of valid messages keep reaching translation and sending.
        let soon = Timestamps.format(Date().addingTimeInterval(86_400))
        func pointed(_ bytes: [UInt8]) -> [UInt8] {
            guard let webOrigin else { return bytes }
            return Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "https://push.example.net", with: webOrigin).utf8)
        }
        let notifications = try Self.examples("valid").map {
            pointed(Self.replaceValue(of: "expires_at", in: Self.replaceValue(of: "created_at", in: $0, with: now), with: soon))
        }
        let receipts = try Self.examples("receipts/valid").map { Self.replaceValue(of: "at", in: $0, with: now) }
        let devices = try Self.examples("devices/valid").map { pointed(Self.replaceValue(of: "at", in: $0, with: now)) }
        guard !notifications.isEmpty, !receipts.isEmpty, !devices.isEmpty else { throw TestFailure("no valid examples found") }

        // Every numeric field and every timestamp of every intake example, each with a hostile value.
        var produced = 0
        let systematicLimit = count / 4
        for (e, example) in notifications.enumerated() where !control {
            let id = rng.uuid().uuidString.lowercased()
            let base = Self.replaceValue(of: "id", in: example, with: id)
            let tokens = JSONTokens(base)
            var edits: [(Range<Int>, String, String)] = tokens.numbers.enumerated().map { j, span in
                let number = FuzzMutator.hostileNumbers[(j + e) % FuzzMutator.hostileNumbers.count]
                return (span.range, number, "number field at \(span.range.lowerBound) → \(number)")
            }
            let stamps = tokens.strings.filter { !$0.isKey && FuzzMutator.isDateLike(base, at: $0.range.lowerBound) }
            for (j, span) in stamps.enumerated() {
                let stamp = FuzzMutator.hostileTimestamps[(j + e) % FuzzMutator.hostileTimestamps.count]
                edits.append((span.range, stamp, "timestamp field at \(span.range.lowerBound) → \(stamp)"))
            }
            for (range, replacement, mutation) in edits where produced < systematicLimit {
                var bytes = base
                bytes.replaceSubrange(range, with: Array(replacement.utf8))
                addHostile(topic: "push.notifications", bytes: bytes, mutation: mutation, planted: id)
                produced += 1
            }
        }
        // Two messages near the broker's 1,000,000-byte limit.
        if count >= 100, !control {
            let big = Self.replaceValue(of: "body", in: Self.replaceValue(of: "id", in: notifications[0], with: rng.uuid().uuidString.lowercased()),
                                        with: String(repeating: "x", count: 990_000 - notifications[0].count))
            addHostile(topic: "push.notifications", bytes: big, mutation: "\(big.count)-byte notification", planted: nil)
            let bigReceipt = Array("{\"schema_version\":1,\"token\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 989_000) + Array("\"}".utf8)
            addHostile(topic: "push.receipts", bytes: bigReceipt, mutation: "\(bigReceipt.count)-byte receipt", planted: nil)
            produced += 2
        }
        // The rest: every mutation kind in turn over every example of every topic, and random bytes.
        // FUZZ_SKIP_KINDS (comma-separated) leaves kinds out, to see what fails behind a first failure.
        let skipped = Set((ProcessInfo.processInfo.environment["FUZZ_SKIP_KINDS"] ?? "").split(separator: ",").map(String.init))
        // (Skipping any kind also drops `stacked`, which could bring it back.)
        let kinds = FuzzMutator.kinds.filter { !skipped.contains($0) && (skipped.isEmpty || $0 != "stacked") }
        var i = 0
        while produced < count {
            let topic = Self.topicCycle[i % Self.topicCycle.count]
            let kind = control ? "none" : kinds[(i / Self.topicCycle.count + i) % kinds.count]
            if i % 25 == 24, !control {
                let m = FuzzMutator.randomBytes(count: rng.below(4096), rng: &rng)
                addHostile(topic: topic, bytes: m.bytes, mutation: m.mutation, planted: nil)
            } else if Self.notificationTopics.contains(topic) {
                let id = rng.uuid().uuidString.lowercased()
                let base = Self.replaceValue(of: "id", in: notifications[(i / 7) % notifications.count], with: id)
                let m = FuzzMutator.apply(kind, to: base, rng: &rng)
                addHostile(topic: topic, bytes: m.bytes, mutation: m.mutation, planted: id)
            } else if topic == "push.receipts" {
                let id = rng.uuid().uuidString.lowercased()
                let base = Self.replaceValue(of: "notification_id", in: receipts[(i / 7) % receipts.count], with: id)
                let m = FuzzMutator.apply(kind, to: base, rng: &rng)
                addHostile(topic: topic, bytes: m.bytes, mutation: m.mutation, planted: id)
            } else {
                let example = devices[(i / 7) % devices.count]
                let token = String(decoding: example, as: UTF8.self).contains("\"android\"") ? "fuzz-token-" + rng.hex(40) : rng.hex(64)
                let m = FuzzMutator.apply(kind, to: Self.replaceValue(of: "token", in: example, with: token), rng: &rng)
                addHostile(topic: topic, bytes: m.bytes, mutation: m.mutation, planted: token)
            }
            produced += 1
            i += 1
        }
    }

    /// A hostile message, then its canary on the same partition with the same key.
    private mutating func addHostile(topic: String, bytes: [UInt8], mutation: String, planted: String?) {
        let partition = nextPartition[topic, default: 0]
        nextPartition[topic] = (partition + 1) % Int32(partitions[topic] ?? 1)
        let canary: (value: String, key: String, planted: String)
        if Self.notificationTopics.contains(topic) {
            let id = rng.uuid().uuidString.lowercased(), token = rng.hex(64)
            canary = ("""
                {"schema_version":1,"id":"\(id)","app":"\(FuzzStack.app)","created_at":"\(now)",\
                "recipients":[{"token":"\(token)","platform":"ios"}],"alert":{"title":"canary","body":"after a hostile message"}}
                """, token, id)
        } else if topic == "push.receipts" {
            let id = rng.uuid().uuidString.lowercased(), token = rng.hex(64)
            canary = ("""
                {"schema_version":1,"notification_id":"\(id)","token":"\(token)","app":"\(FuzzStack.app)",\
                "platform":"ios","kind":"delivered","at":"\(now)"}
                """, token, id)
        } else {
            let token = rng.hex(64)
            canary = ("""
                {"schema_version":1,"app":"\(FuzzStack.app)","platform":"ios","token":"\(token)","action":"register","at":"\(now)"}
                """, token, token)
        }
        let key = Array(canary.key.utf8)
        messages.append(FuzzMessage(topic: topic, partition: partition, key: key, value: bytes, role: .hostile,
                                    mutation: mutation, planted: planted))
        messages.append(FuzzMessage(topic: topic, partition: partition, key: key, value: Array(canary.value.utf8), role: .canary,
                                    mutation: "canary", planted: canary.planted))
    }

    /// `bytes` with the first string value of `key` replaced by `value` (unchanged if there is none).
    static func replaceValue(of key: String, in bytes: [UInt8], with value: String) -> [UInt8] {
        let tokens = JSONTokens(bytes)
        let name = Array(key.utf8)
        guard let k = tokens.strings.firstIndex(where: { $0.isKey && Array(bytes[$0.range]) == name }),
              k + 1 < tokens.strings.count, !tokens.strings[k + 1].isKey else { return bytes }
        var out = bytes
        out.replaceSubrange(tokens.strings[k + 1].range, with: Array(value.utf8))
        return out
    }
}
