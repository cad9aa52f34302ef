import Foundation
import PushCore

/// PushCore's per-message CPU on its own: decoding the intake messages the
/// pipeline bench publishes, and translating one of them per request. No
/// network, no other threads, so `valgrind --tool=callgrind` can count the
/// instructions of exactly this work.
struct BenchCore {
    /// Distinct intake messages decoded round-robin (each has its own id and token).
    let messages: [[UInt8]]
    let context: TranslationContext

    init(app: String = BenchSendSetup.app, distinct: Int = 1024) {
        let createdAt = Date()
        messages = (0..<distinct).map { BenchPublisher.message($0, app: app, createdAt: createdAt).value }
        context = TranslationContext(apnsTopic: app, fcmProjectID: BenchSendSetup.projectID)
    }

    /// Nanoseconds per message of `PushNotification.decode` alone, on this thread.
    func decodeCost(count: Int) throws -> Double { try nanoseconds(count: count, decodeLoop) }

    /// Runs `loop` over `count` messages; nanoseconds per message (0 when it produced nothing).
    private func nanoseconds(count: Int, _ loop: (Int) throws -> Int) throws -> Double {
        let start = ContinuousClock.now
        let produced = try loop(count)
        let elapsed = ContinuousClock.now - start
        return produced > 0 ? elapsed.seconds * 1e9 / Double(count) : 0
    }

    /// Decodes `count` messages; returns how many recipients they had (so nothing is optimised away).
    @inline(never)
    func decodeLoop(count: Int) throws -> Int {
        var recipients = 0
        for i in 0..<count {
            recipients &+= try PushNotification.decode(messages[i % messages.count]).get().recipients.count
        }
        return recipients
    }

    /// Nanoseconds per request of decode then translate (decode, then one
    /// provider request per device recipient), as a worker does per message.
    func decodeAndTranslateCost(count: Int) throws -> Double { try nanoseconds(count: count, decodeAndTranslateLoop) }

    /// Decodes and translates `count` messages; returns the body bytes made.
    @inline(never)
    func decodeAndTranslateLoop(count: Int) throws -> Int {
        var bytes = 0
        for i in 0..<count {
            let n = try PushNotification.decode(messages[i % messages.count]).get()
            for recipient in n.recipients { bytes &+= try n.request(for: recipient, context: context).get().body.count }
        }
        return bytes
    }
}
