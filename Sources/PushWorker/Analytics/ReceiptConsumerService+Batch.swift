import Foundation
import PushCore
import PushKafka
import PushPostgres

extension ReceiptConsumerService {
    /// Applies one polled batch. Returns false when the service stopped before
    /// the batch was safely written (its offsets must then stay unstored).
    func handle(_ messages: [KafkaMessage], producer: KafkaProducer, store: ReceiptStore) async throws -> Bool {
        var valid: [Receipt] = []
        var malformed: [(message: KafkaMessage, reason: String)] = []
        for message in messages {
            switch Receipt.decode(message.value) {
            case .success(let receipt): valid.append(receipt)
            case .failure(let error): malformed.append((message, error.reason))
            }
        }
        if !valid.isEmpty {
            guard try await applyRetrying(valid, store: store) else { return false }
        }
        if !malformed.isEmpty { try await deadLetter(malformed, producer: producer) }
        recordTotals(valid: valid, malformed: malformed.count)
        return true
    }

    /// PostgreSQL away (restart, failover): keep trying with backoff until it
    /// commits; give up only when the service stops.
    private func applyRetrying(_ receipts: [Receipt], store: ReceiptStore) async throws -> Bool {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                let applied = try await store.apply(receipts)
                logger.debug("receipts applied", metadata: [
                    "receipts.count": "\(receipts.count)", "receipts.new": "\(applied.newReceipts)",
                    "receipts.deliveries": "\(applied.matchedDeliveries)",
                ])
                return true
            } catch {
                if isStopping || Task.isCancelled { return false }
                logger.warning("receipt batch not written; retrying", metadata: ["error": "\(error)", "receipts.count": "\(receipts.count)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Sends every malformed receipt to the dead-letter topic and waits for
    /// the brokers to acknowledge them all.
    private func deadLetter(_ items: [(message: KafkaMessage, reason: String)], producer: KafkaProducer) async throws {
        let topic = configuration.deadLetterTopic
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in items {
                var headers = RetryHeaders()
                headers.reason = "receipt \(item.reason)"
                headers.lastError = item.reason
                headers.firstFailureAt = Date()
                headers.setOrigin(from: item.message)
                let kafkaHeaders = headers.kafkaHeaders
                let message = item.message
                group.addTask {
                    try await producer.send(topic: topic, key: message.key, value: message.value, headers: kafkaHeaders)
                }
            }
            try await group.waitForAll()
        }
        for item in items {
            logger.warning("malformed receipt dead-lettered", metadata: [
                "kafka.partition": "\(item.message.partition)", "kafka.offset": "\(item.message.offset)",
                "receipts.reason": "\(item.reason)",
            ])
        }
    }

    private func recordTotals(valid: [Receipt], malformed: Int) {
        for kind in Receipt.Kind.allCases {
            let n = valid.filter { $0.kind == kind }.count
            if n > 0 { receiptCounter(kind).increment(by: n) }
        }
        if malformed > 0 { invalidReceiptCounter.increment(by: malformed) }
        updateTotals(applied: valid.count, deadLettered: malformed)
    }
}
