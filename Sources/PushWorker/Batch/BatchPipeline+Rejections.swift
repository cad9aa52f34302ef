import Foundation
import PushCore
import PushKafka

extension BatchPipeline {
    /// A message that is not a notification (or device event): recorded with
    /// its named reason and field path, and dead-lettered with them.
    func reject(_ message: KafkaMessage, _ error: IntakeError, headers: RetryHeaders, into outcome: inout BatchOutcome) {
        let kind = error.reason.rawValue
        logger.warning("intake message rejected", metadata: [
            "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)",
            "kafka.offset": "\(message.offset)", "intake.reason": "\(kind)", "intake.field": "\(error.fieldPath)",
            "push.notification_id": "\(error.notificationID?.uuidString.lowercased() ?? "-")",
            "error": "\(error.detail)",
        ])
        outcome.rejections.append(IntakeRejection(
            notificationID: error.notificationID, app: error.app, kind: kind, reason: error.detail,
            topic: message.topic, partition: message.partition, offset: message.offset, fieldPath: error.fieldPath))
        var dlq = headers
        dlq.reason = "\(kind): \(error.detail)"
        outcome.outgoing.append(OutgoingMessage(
            topic: topics.deadLetter, key: message.key, value: message.value, headers: dlq.kafkaHeaders,
            label: kind, origin: MessageOrigin(message), notificationID: error.notificationID))
    }

    /// A single message whose processing PostgreSQL refused with a data
    /// error (found by bisecting its batch): rejected `processing_failed` and
    /// dead-lettered, so it cannot stop the partition. Nothing of it was sent:
    /// every query of a batch runs before its first send.
    func poisoned(_ message: KafkaMessage, _ error: any Error) -> BatchOutcome {
        var outcome = BatchOutcome()
        var headers = decoder.trustedHeaders(of: message)
        headers.setOrigin(from: message)
        let text = "\(error)"
        logger.error("message refused by PostgreSQL; dead-lettered", metadata: [
            "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)",
            "kafka.offset": "\(message.offset)", "error": "\(text)",
        ])
        outcome.rejections.append(IntakeRejection(
            notificationID: nil, app: nil, kind: PoisonStage.processing.rawValue, reason: text,
            topic: message.topic, partition: message.partition, offset: message.offset, fieldPath: nil))
        headers.reason = "\(PoisonStage.processing.rawValue): \(text)"
        outcome.outgoing.append(OutgoingMessage(
            topic: topics.deadLetter, key: message.key, value: message.value, headers: headers.kafkaHeaders,
            label: PoisonStage.processing.rawValue, origin: MessageOrigin(message)))
        return outcome
    }
}

/// Where a record was refused and isolated from its batch: the `kind` of
/// its `intake_rejections` row and the `stage` label of
/// `pushfleet_poison_records_total`.
enum PoisonStage: String, Sendable {
    /// A query about the message (devices, ledger) failed with a data error.
    case processing = "processing_failed"
    /// PostgreSQL refused one of the message's outcome rows.
    case write = "write_failed"
    /// Kafka refused the dead letter even with its body cut.
    case deadLetter = "dead_letter_failed"
}
