import Foundation
import Logging
import PushCore
import PushKafka
import PushPostgres
import PushProviders
import PushSimulator
import PushWorker

/// A deterministic pseudo-random generator (SplitMix64), so a demo seed
/// always produces the same batch.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One message the demo publishes: a notification, or bytes that are not one.
struct DemoMessage {
    var key: [UInt8]?
    var notification: PushNotification?
    var raw: [UInt8] = []

    /// The bytes to publish. A notification published at a steady rate is
    /// created when it is published (`createdAt`), as a product service
    /// creates it, and expires an hour later.
    func value(createdAt: Date? = nil) -> [UInt8] {
        guard var n = notification else { return raw }
        if let createdAt {
            n.createdAt = createdAt
            n.expiresAt = createdAt.addingTimeInterval(3600)
        }
        return n.intakeJSON().encoded()
    }
}

/// What the demo enqueues and what it therefore expects in PostgreSQL.
struct DemoBatch {
    var messages: [DemoMessage] = []
    /// The apps the notifications are from.
    var apps: Set<String> = []
    var deadTokens: [String: Date] = [:]
    /// "platform|status" → deliveries.
    var expectedCounts: [String: Int] = [:]
    var expectedKeys: [(UUID, String)] = []
    var notificationIDs: [UUID] = []
    var expectedRejections = 0
    /// Tokens (and subscription endpoints) the demo expects invalidated: dead and actually answered 410/404/80300007.
    var expectedInvalidTokens: [String] = []
    var expectedInvalidated: Int { expectedInvalidTokens.count }
    /// Web Push messages the simulator must have decrypted: one per accepted subscription.
    var expectedWebAccepted = 0
    /// Notifications expected in push.dlq because their retries ran out.
    var expectedExhaustedNotifications = 0
    var expectedDeliveries: Int { expectedKeys.count }

    /// Adds `other`'s expectations (its messages are published on their own).
    mutating func expect(_ other: DemoBatch) {
        apps.formUnion(other.apps)
        expectedCounts.merge(other.expectedCounts, uniquingKeysWith: +)
        expectedKeys += other.expectedKeys
        notificationIDs += other.notificationIDs
        expectedRejections += other.expectedRejections
        expectedInvalidTokens += other.expectedInvalidTokens
        expectedWebAccepted += other.expectedWebAccepted
        expectedExhaustedNotifications += other.expectedExhaustedNotifications
    }
}

/// Makes a realistic mixed batch: iOS and Android phones, browsers (Web
/// Push subscriptions at the simulator's `/wp/`) and Huawei phones, one or
/// two devices per notification, about 5% dead tokens or gone subscriptions,
/// 3% malformed tokens, subscription keys no browser made or a Push Kit alert
/// with a title and no body, and a few messages that are not valid
/// notifications at all.
struct DemoGenerator {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// - Parameter webOrigin: the simulator's origin, where subscriptions' endpoints point.
    mutating func makeBatch(count: Int, app: String, webOrigin: String, fcmAlwaysFails: Bool = false) -> DemoBatch {
        var batch = DemoBatch()
        batch.apps = [app]
        let now = Date()
        let deadSince = now.addingTimeInterval(-86_400)
        for i in 0..<count {
            var recipients: [Recipient] = []
            // Push Kit shows only a title with a body: such an alert is rejected for a Huawei phone before any send.
            var titleOnly = false
            let platforms: [Platform] = Double.random(in: 0..<1, using: &rng) < 0.15
                ? [.ios, .android] : [platform(Double.random(in: 0..<1, using: &rng))]
            for platform in platforms {
                let roll = Double.random(in: 0..<1, using: &rng)
                let status: DeliveryStatus = roll < 0.03 ? .rejected : roll < 0.08 ? .invalidToken : .accepted
                let recipient: Recipient
                switch platform {
                case .web:
                    recipient = webRecipient(i, status, origin: webOrigin)
                case .huawei:
                    // Push Kit answers 80300007 (illegal token) for the simulator's dead- tokens.
                    recipient = Recipient(token: (status == .invalidToken ? "dead-" : "") + hmsToken(), platform: .huawei)
                    titleOnly = status == .rejected
                case .ios, .android:
                    let token: String
                    if status == .rejected {
                        token = platform == .ios ? "not-a-device-token-\(i)" : "bad token \(i)!"
                    } else {
                        token = platform == .ios ? hexToken() : fcmToken()
                        if status == .invalidToken { batch.deadTokens[token] = deadSince }
                    }
                    recipient = Recipient(token: token, platform: platform)
                }
                let token = recipient.token
                recipients.append(recipient)
                // With FCM failing every request, every Android send ends dead-lettered.
                let final = fcmAlwaysFails && platform == .android && status != .rejected ? DeliveryStatus.deadLettered : status
                batch.expectedCounts["\(platform.rawValue)|\(final.rawValue)", default: 0] += 1
                if final == .invalidToken { batch.expectedInvalidTokens.append(token) }
                if platform == .web, final == .accepted { batch.expectedWebAccepted += 1 }
            }
            let id = UUID(uuid: randomUUIDBytes())
            let silent = Double.random(in: 0..<1, using: &rng) < 0.1 && !titleOnly
            let n = PushNotification(
                id: id, app: app, createdAt: now, expiresAt: now.addingTimeInterval(3600),
                priority: silent ? .low : .high, collapseKey: i % 7 == 0 ? "digest" : nil, recipients: recipients,
                alert: silent ? nil : .init(title: "Order \(1000 + i)", body: titleOnly ? nil : "Your order \(1000 + i) has shipped."),
                badge: silent ? nil : i % 5, sound: silent ? nil : "default", contentAvailable: silent,
                data: [("order_id", .string("\(1000 + i)")), ("seq", .int(Int64(i)))])
            for r in recipients { batch.expectedKeys.append((id, r.token)) }
            if fcmAlwaysFails, recipients.contains(where: { $0.platform == .android && FCMTranslator.isWellFormedToken($0.token) }) {
                batch.expectedExhaustedNotifications += 1
            }
            batch.notificationIDs.append(id)
            batch.messages.append(DemoMessage(key: Array(n.partitionKey.utf8), notification: n))
        }
        // Messages that are not notifications: each must be recorded, none may block the rest.
        let invalid = max(3, count / 100)
        for i in 0..<invalid {
            let text: String
            switch i % 3 {
            case 0: text = #"{"schema_version": 1, "id": "#  // truncated JSON
            case 1: text = #"{"schema_version":1,"id":"\#(UUID().uuidString)","app":"\#(app)","created_at":"\#(Timestamps.format(now))","recipients":[],"alert":{"body":"x"}}"#
            default: text = #"{"schema_version":7,"id":"\#(UUID().uuidString)","app":"\#(app)"}"#
            }
            let position = Int.random(in: 0...batch.messages.count, using: &rng)
            batch.messages.insert(DemoMessage(key: nil, raw: Array(text.utf8)), at: position)
        }
        batch.expectedRejections = invalid
        return batch
    }

    /// A campaign of `app` for the bulk lane: one phone each, half iPhones and
    /// half Android phones, every token alive, so every delivery ends accepted.
    mutating func makeCampaign(count: Int, app: String) -> DemoBatch {
        var batch = DemoBatch()
        for i in 0..<count {
            single(&batch, app: app, platform: i % 2 == 0 ? .ios : .android, expected: .accepted,
                   title: "Weekend sale", body: "Everything 20% off until Sunday (\(i)).")
        }
        return batch
    }

    /// Notifications of an app whose APNs key the provider refuses (403
    /// `InvalidProviderToken`): one iPhone each. A refused key is an attempt
    /// that failed, so each goes through the retry tiers and ends
    /// dead-lettered when its attempts run out.
    mutating func makeRefusedKeyBatch(count: Int, app: String) -> DemoBatch {
        var batch = DemoBatch()
        for i in 0..<count {
            single(&batch, app: app, platform: .ios, expected: .deadLettered, title: "Hello", body: "Message \(i)")
        }
        batch.expectedExhaustedNotifications = count
        return batch
    }

    /// Adds a notification for one phone with a live token, expected to end `expected`.
    private mutating func single(_ batch: inout DemoBatch, app: String, platform: Platform, expected: DeliveryStatus,
                                 title: String, body: String) {
        let now = Date()
        let token = platform == .ios ? hexToken() : fcmToken()
        let n = PushNotification(
            id: UUID(uuid: randomUUIDBytes()), app: app, createdAt: now, expiresAt: now.addingTimeInterval(3600),
            priority: .high, collapseKey: nil, recipients: [Recipient(token: token, platform: platform)],
            alert: .init(title: title, body: body), badge: nil, sound: "default", contentAvailable: false, data: [])
        batch.apps.insert(app)
        batch.expectedCounts["\(platform.rawValue)|\(expected.rawValue)", default: 0] += 1
        batch.expectedKeys.append((n.id, token))
        batch.notificationIDs.append(n.id)
        batch.messages.append(DemoMessage(key: Array(n.partitionKey.utf8), notification: n))
    }

    /// 40% iOS, 40% Android, 10% browsers, 10% Huawei phones.
    private func platform(_ roll: Double) -> Platform {
        roll < 0.4 ? .ios : roll < 0.8 ? .android : roll < 0.9 ? .web : .huawei
    }

    /// A subscription the simulator can decrypt for (`/wp/<id>`); gone ones
    /// answer 410 (`gone-` ids); a rejected one carries a p256dh that passes
    /// intake (65 bytes, 0x04 first) but is no point on the curve, so sealing refuses it.
    private mutating func webRecipient(_ i: Int, _ status: DeliveryStatus, origin: String) -> Recipient {
        let id = (status == .invalidToken ? "gone-" : "") + "demo-\(i)-\(rng.next() & 0xFFFF_FFFF)"
        let s = SimulatorWebPushSubscriptions.subscription(id: id, origin: origin)
        guard status == .rejected else { return Recipient(endpoint: s.endpoint, keys: WebPushKeys(p256dh: s.p256dh, auth: s.auth)) }
        let offCurve = Base64URL.encode([0x04] + [UInt8](repeating: 0x01, count: 64))
        return Recipient(endpoint: s.endpoint, keys: WebPushKeys(p256dh: offCurve, auth: s.auth))
    }

    /// A Push Kit token's shape: ~130 characters of letters, digits and `-_.`.
    private mutating func hmsToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        return "IQAAAAC" + String((0..<124).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
    }

    private mutating func hexToken() -> String {
        let hex = Array("0123456789abcdef")
        return String((0..<64).map { _ in hex[Int.random(in: 0..<16, using: &rng)] })
    }

    private mutating func fcmToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let prefix = String((0..<22).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
        let rest = String((0..<140).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
        return prefix + ":APA91b" + rest
    }

    private mutating func randomUUIDBytes() -> uuid_t {
        var b = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}

/// Plays the apps' part in the demo: once a delivery is accepted, publishes a
/// `delivered` receipt for about 60 % of them and an `opened` receipt for
/// about 40 % of those to `push.receipts` (chosen by a hash of the token, so a
/// run is reproducible), and counts what landed in PostgreSQL.
final class DemoReceipts {
    static let topic = DemoRun.topics.receipts
    let producer: KafkaProducer
    /// "notification|token" → (platform, opened too?).
    private(set) var published: [String: (platform: String, opened: Bool)] = [:]

    init(bootstrap: String, logger: Logger) throws {
        producer = try KafkaProducer(bootstrapServers: bootstrap, properties: ["linger.ms": "5"], logger: logger)
    }

    var publishedDelivered: Int { published.count }
    var publishedOpened: Int { published.values.filter(\.opened).count }

    /// FNV-1a, stable across runs (Swift's hashValue is seeded per process).
    static func share(_ text: String, salt: UInt8) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in [salt] + Array(text.utf8) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return Int(h % 100)
    }

    /// Publishes receipts for deliveries accepted since the last call.
    func publishNew(on connection: PostgresConnection, ids: [UUID], app: String) async throws {
        let rows = try await connection.query(
            """
            SELECT notification_id::text AS n, token AS t, platform AS p, accepted_at AS a
            FROM deliveries WHERE notification_id = ANY($1::uuid[]) AND accepted_at IS NOT NULL AND delivered_at IS NULL
            """, [.uuidArray(ids)])
        var sends: [(key: String, receipt: Receipt)] = []
        for row in rows.rows {
            guard let n = row["n"], let t = row["t"], let p = row["p"], let id = UUID(uuidString: n),
                  let platform = Platform(rawValue: p), let accepted = try row.date("a") else { continue }
            let key = n + "|" + t
            guard published[key] == nil, Self.share(t, salt: 1) < 60 else { continue }
            let opened = Self.share(t, salt: 2) < 40
            published[key] = (p, opened)
            sends.append((n, Receipt(notificationID: id, token: t, app: app, platform: platform, kind: .delivered,
                                     at: accepted.addingTimeInterval(0.05))))
            if opened {
                sends.append((n, Receipt(notificationID: id, token: t, app: app, platform: platform, kind: .opened,
                                         at: accepted.addingTimeInterval(1.5))))
            }
        }
        let producer = self.producer
        try await withThrowingTaskGroup(of: Void.self) { group in
            for send in sends {
                group.addTask {
                    try await producer.send(topic: Self.topic, key: Array(send.key.utf8), value: send.receipt.json().encoded())
                }
            }
            try await group.waitForAll()
        }
    }

    /// Receipt times found on the batch's deliveries.
    func landed(on connection: PostgresConnection, ids: [UUID]) async throws -> (delivered: Int, opened: Int) {
        let rows = try await connection.query(
            "SELECT count(delivered_at) AS d, count(opened_at) AS o FROM deliveries WHERE notification_id = ANY($1::uuid[])",
            [.uuidArray(ids)])
        return (rows.first?.count("d") ?? 0, rows.first?.count("o") ?? 0)
    }

    /// Expected final counts once the receipts landed: accepted rows move to delivered/opened.
    func adjust(_ expected: [String: Int]) -> [String: Int] {
        var out = expected
        for (platform, opened) in published.values {
            out["\(platform)|accepted", default: 0] -= 1
            out["\(platform)|\(opened ? "opened" : "delivered")", default: 0] += 1
        }
        return out.filter { $0.value != 0 }
    }

    func close() async { await producer.close(timeout: .seconds(10)) }
}
