import Foundation
import Logging
import PushCore
import PushProducer

/// Enqueues the pipeline benchmark's notifications: one iOS device each, a
/// fresh token per notification, keyed by token as product services do.
struct BenchPublisher: Sendable {
    let app: String
    let bootstrap: String
    let logger: Logger

    /// Publishes `count` notifications, all at once (at most 10,000 awaiting
    /// acknowledgement) or paced at `rate` per second. Returns how many the
    /// brokers acknowledged and the seconds it took.
    func publish(count: Int, rate: Double?) async throws -> (Int, Double) {
        // Enqueue-first: bigger producer batches (linger 100 ms instead of 5). The mock
        // broker answers a fetch with one message set per partition (a real broker
        // fills max.partition.fetch.bytes), so tiny batches would make the workers'
        // fetches, not the workers, the limit; it also cuts the enqueue's CPU.
        // Paced runs keep the default: linger is part of their enqueue→accepted.
        let publisher = try NotificationPublisher(
            bootstrapServers: bootstrap, properties: rate == nil ? ["linger.ms": "100"] : [:], logger: logger)
        let start = ContinuousClock.now
        let createdAt = Date()
        var acknowledged = 0
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight = 0
                for i in 0..<count {
                    if let rate {
                        let due = start + .nanoseconds(Int64(Double(i) / rate * 1e9))
                        if due > ContinuousClock.now { try await Task.sleep(until: due, clock: .continuous) }
                    }
                    if inFlight >= 10_000 {
                        _ = try await group.next()
                        inFlight -= 1
                        acknowledged += 1
                    }
                    let (key, value) = Self.message(i, app: app, createdAt: createdAt)
                    group.addTask { _ = try await publisher.publishRaw(value, key: key) }
                    inFlight += 1
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
    static func message(_ i: Int, app: String, createdAt: Date) -> (key: [UInt8], value: [UInt8]) {
        var rng = SplitMix64(seed: UInt64(i) &* 0x9E37_79B9 &+ 17)
        let token = (0..<4).map { _ in String(format: "%016llx", rng.next()) }.joined()
        let n = PushNotification(
            id: UUID(), app: app, createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(3600),
            recipients: [Recipient(token: token, platform: .ios)],
            alert: PushNotification.Alert(title: "Your order shipped", body: "Order #\(i) is on its way."),
            badge: 1, data: [("order_id", .string(String(i)))])
        return (Array(token.utf8), n.intakeJSON().encoded())
    }
}
