import Foundation
import Logging
import PushKafka

/// Produces the retry and dead-letter messages of a batch and waits for every
/// acknowledgement. Each message is retried on its own while the brokers are
/// away (one acknowledged is never produced again by this step), and a
/// message Kafka refuses for itself (too large, an invalid record) goes down
/// `DeadLetterFit`'s fallbacks instead of failing its batch for ever.
struct OutgoingProducer: Sendable {
    let producer: KafkaProducer
    let deadLetterTopic: String
    let logger: Logger

    /// What producing came to.
    struct Produced: Sendable {
        /// Messages the brokers acknowledged (possibly a smaller dead letter
        /// in place of what was asked).
        var sent: [OutgoingMessage] = []
        /// Notifications whose retry message became a dead letter.
        var rerouted: Set<UUID> = []
        /// Dead letters Kafka refused even without a body: recorded instead.
        var failed: [IntakeRejection] = []
    }

    func produce(_ outgoing: [OutgoingMessage]) async throws -> Produced {
        try await withThrowingTaskGroup(of: (OutgoingMessage, OutgoingMessage?, IntakeRejection?).self) { group in
            for message in outgoing {
                group.addTask {
                    let (sent, failure) = try await self.produceOne(message)
                    return (message, sent, failure)
                }
            }
            var produced = Produced()
            for try await (asked, sent, failure) in group {
                if let sent {
                    produced.sent.append(sent)
                    if asked.topic != sent.topic, let id = asked.notificationID { produced.rerouted.insert(id) }
                }
                if let failure { produced.failed.append(failure) }
            }
            return produced
        }
    }

    /// The message as acknowledged, or the rejection recorded in its place.
    /// Fatal producer errors propagate (the producer must be replaced).
    func produceOne(_ original: OutgoingMessage) async throws -> (OutgoingMessage?, IntakeRejection?) {
        var message = original
        var delay = Duration.milliseconds(100)
        while true {
            try Task.checkCancellation()
            do {
                try await producer.send(topic: message.topic, key: message.key, value: message.value, headers: message.headers)
                return (message, nil)
            } catch let error as KafkaError where error.isRetriable && !error.isFatal {
                logger.warning("Kafka unavailable; retrying", metadata: ["worker.step": "produce to \(message.topic)", "error": "\(error)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            } catch let error as KafkaError where !error.isFatal {
                logger.error("Kafka refused a message; producing a smaller dead letter", metadata: [
                    "kafka.topic": "\(message.topic)", "kafka.bytes": "\(message.value.count)",
                    "kafka.origin": "\(message.origin.map { "\($0.topic)/\($0.partition)/\($0.offset)" } ?? "-")",
                    "error": "\(error)",
                ])
                guard let next = DeadLetterFit.next(after: message, refusal: "\(error.name): \(error.message)",
                                                    deadLetterTopic: deadLetterTopic) else {
                    let at = message.origin ?? MessageOrigin(topic: "(unknown)", partition: -1, offset: -1)
                    return (nil, IntakeRejection(
                        notificationID: message.notificationID, app: nil, kind: PoisonStage.deadLetter.rawValue,
                        reason: "\(deadLetterTopic) refused the dead letter even without a body: \(error)",
                        topic: at.topic, partition: at.partition, offset: at.offset, fieldPath: nil))
                }
                message = next
            }
        }
    }
}
