import Foundation
import Logging
import PushCore
import PushProducer

/// Enqueues the pipeline benchmark's notifications: one iOS device each, a
/// fresh token per notification, keyed by token as product services do.
/// `prepare` does what a long-running product service has done before its
/// first notification (connect, learn the topic); `publish` is the timed part.
final class BenchPublisher: Sendable {
    /// How the bench's producer makes notification ids.
    enum IDs: String, CaseIterable {
        /// Version 4 UUIDs, as most producers make them (`UUID()`).
        case random
        /// Version 7 UUIDs (`NotificationID.timeOrdered`), growing with time.
        case timeOrdered = "time-ordered"

        func make() -> UUID {
            switch self {
            case .random: UUID()
            case .timeOrdered: NotificationID.timeOrdered()
            }
        }
    }

    let app: String
    let count: Int
    /// Recipients per message.
    let devices: Int
    /// Recipients are user ids (`u<n>`), not tokens.
    let users: Bool
    let ids: IDs
    /// The campaign every notification carries, if any.
    let campaign: String?
    /// Notifications per second, or nil to enqueue them all at once.
    let rate: Double?
    private let publisher: NotificationPublisher
    private let createdAt = Date()
    /// A paced run's messages, encoded before its clock starts: making up the
    /// bench's notifications is not the system under test, and in the timed
    /// window it would take CPU from the cores the workers, PostgreSQL and the
    /// sink share. Enqueue-first runs encode as they go (flat memory for 1M).
    private let encoded: [(key: [UInt8], value: [UInt8])]

    private init(app: String, count: Int, devices: Int, users: Bool, rate: Double?, ids: IDs, campaign: String?,
                 publisher: NotificationPublisher) {
        self.app = app
        self.campaign = campaign
        self.count = count
        self.devices = devices
        self.users = users
        self.rate = rate
        self.ids = ids
        self.publisher = publisher
        let createdAt = self.createdAt
        self.encoded = rate == nil ? [] : (0..<count).map {
            Self.message($0, app: app, createdAt: createdAt, id: ids.make(), devices: devices, users: users, campaign: campaign)
        }
    }

    /// Creates the producer, connects it and reads the intake topic's metadata
    /// (else the first messages' enqueue time would include that), and encodes
    /// a paced run's messages.
    static func prepare(app: String, bootstrap: String, count: Int, devices: Int = 1, users: Bool = false, rate: Double?, ids: IDs,
                        campaign: String? = nil, logger: Logger) async throws -> BenchPublisher {
        // Enqueue-first: bigger producer batches (linger 100 ms instead of 5). The mock
        // broker answers a fetch with one message set per partition (a real broker
        // fills max.partition.fetch.bytes), so tiny batches would make the workers'
        // fetches, not the workers, the limit; it also cuts the enqueue's CPU.
        // Paced runs keep the default: linger is part of their enqueue→accepted.
        let publisher = try NotificationPublisher(
            bootstrapServers: bootstrap, properties: rate == nil ? ["linger.ms": "100"] : [:], logger: logger)
        do {
            try await publisher.connect()
        } catch {
            await publisher.close()
            throw error
        }
        return BenchPublisher(app: app, count: count, devices: devices, users: users, rate: rate, ids: ids, campaign: campaign,
                              publisher: publisher)
    }

    /// Publishes the notifications, all at once (at most 10,000 awaiting
    /// acknowledgement) or paced at `rate` per second, then closes the producer.
    /// Returns how many the brokers acknowledged and the seconds it took.
    func publish() async throws -> (Int, Double) {
        let start = ContinuousClock.now
        var acknowledged = 0
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight = 0
                var next = 0
                while next < count {
                    // Paced: wake at most once a millisecond and publish every message due
                    // by then (a sleep per message would cost a timer wake-up each).
                    var due = count
                    if let rate {
                        due = min(count, Int((ContinuousClock.now - start).seconds * rate) + 1)
                        if due <= next {
                            let nextDue = start + .nanoseconds(Int64(Double(next) / rate * 1e9))
                            try await Task.sleep(until: max(nextDue, .now + .milliseconds(1)), clock: .continuous)
                            continue
                        }
                    }
                    while next < due {
                        if inFlight >= 10_000 {
                            _ = try await group.next()
                            inFlight -= 1
                            acknowledged += 1
                        }
                        let (key, value) = rate == nil
                            ? Self.message(next, app: app, createdAt: createdAt, id: ids.make(), devices: devices, users: users,
                                           campaign: campaign)
                            : encoded[next]
                        group.addTask { [publisher] in _ = try await publisher.publishRaw(value, key: key) }
                        inFlight += 1
                        next += 1
                    }
                }
                while try await group.next() != nil { acknowledged += 1 }
            }
        } catch {
            await publisher.close()
            throw error
        }
        await publisher.close()
        return (acknowledged, (ContinuousClock.now - start).seconds)
    }

    /// Notification i as the pipeline bench publishes it: key and intake JSON
    /// (also what `bench core` and `bench send` decode).
    /// With `devices` over 1, a campaign message: that many tokens, keyed by the first;
    /// with `users`, that many user ids (`u<i × devices + k>`) instead.
    static func message(_ i: Int, app: String, createdAt: Date, id: UUID = UUID(), devices: Int = 1,
                        users: Bool = false, campaign: String? = nil) -> (key: [UInt8], value: [UInt8]) {
        var rng = SplitMix64(seed: UInt64(i) &* 0x9E37_79B9 &+ 17)
        let tokens = (0..<max(1, devices)).map { _ in (0..<4).map { _ in String(format: "%016llx", rng.next()) }.joined() }
        let token = tokens[0]
        var n = PushNotification(
            id: id, app: app, createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(3600),
            recipients: users ? [] : tokens.map { Recipient(token: $0, platform: .ios) },
            alert: PushNotification.Alert(title: "Your order shipped", body: "Order #\(i) is on its way."),
            badge: 1, data: [("order_id", .string(String(i)))])
        if users { n.userRecipients = (0..<max(1, devices)).map { "u\(i * devices + $0)" } }
        n.campaign = campaign
        return (Array((users ? n.userRecipients[0] : token).utf8), n.intakeJSON().encoded())
    }
}
