import Foundation
import PushCore
import PushKafka
import PushPostgres

extension ReceiptConsumerService {
    /// Applies one polled batch. Returns false when the service stopped before
    /// the batch was safely written (its offsets must then stay unstored).
    ///
    /// Every message ends applied, or rejected: an `intake_rejections` row
    /// with its reason plus a dead letter. A malformed receipt is rejected at
    /// decode; one PostgreSQL refuses (a data error, not an outage) is found
    /// by bisecting the batch and rejected `write_failed`, and the rest apply.
    func handle(_ messages: [KafkaMessage], producer: KafkaProducer, store: ReceiptStore) async throws -> Bool {
        var valid: [(message: KafkaMessage, receipt: Receipt)] = []
        var rejected: [Rejected] = []
        for message in messages {
            switch Receipt.decode(message.value) {
            case .success(let receipt): valid.append((message, receipt))
            case .failure(let error):
                rejected.append(Rejected(message: message, kind: error.code.rawValue, reason: error.reason, fieldPath: error.path))
            }
        }
        var applied = valid.map(\.receipt)
        if !valid.isEmpty {
            guard let refused = try await applyIsolating(valid, store: store) else { return false }
            if !refused.isEmpty {
                let offsets = Set(refused.map { MessageOrigin($0.message) })
                applied = valid.filter { !offsets.contains(MessageOrigin($0.message)) }.map(\.receipt)
                rejected += refused
            }
        }
        if !rejected.isEmpty {
            guard try await record(rejected, producer: producer, store: store) else { return false }
        }
        recordTotals(applied: applied, rejected: rejected.count)
        return true
    }

    /// A receipt message that did not apply, and why.
    struct Rejected: Sendable {
        var message: KafkaMessage
        var kind: String
        var reason: String
        var fieldPath: String?
    }

    /// Applies the receipts; a batch PostgreSQL refuses with a data error is
    /// bisected until the receipt behind it is found. Returns the refused
    /// receipts, or nil when the service stopped first.
    private func applyIsolating(_ items: [(message: KafkaMessage, receipt: Receipt)], store: ReceiptStore) async throws -> [Rejected]? {
        do {
            guard try await applyRetrying(items.map(\.receipt), store: store) else { return nil }
            return []
        } catch let error as PostgresError where error.isDataError {
            guard items.count > 1, let first = items.first else {
                logger.error("receipt refused by PostgreSQL; rejected", metadata: [
                    "kafka.partition": "\(items.first?.message.partition ?? -1)", "kafka.offset": "\(items.first?.message.offset ?? -1)",
                    "error": "\(error)",
                ])
                return items.map { Rejected(message: $0.message, kind: "write_failed", reason: "receipt refused: \(error)", fieldPath: nil) }
            }
            logger.warning("receipt batch refused by PostgreSQL; isolating the receipt behind it", metadata: [
                "kafka.offset": "\(first.message.offset)", "receipts.count": "\(items.count)", "error": "\(error)",
            ])
            let middle = items.count / 2
            guard let a = try await applyIsolating(Array(items[..<middle]), store: store),
                  let b = try await applyIsolating(Array(items[middle...]), store: store) else { return nil }
            return a + b
        }
    }

    /// PostgreSQL away (restart, failover): keep trying with backoff until it
    /// commits; give up only when the service stops. A data error is thrown
    /// at once: repeating the same statement cannot help.
    private func applyRetrying(_ receipts: [Receipt], store: ReceiptStore) async throws -> Bool {
        try await retryingWhileAway("receipt batch not written") {
            let applied = try await store.apply(receipts)
            logger.debug("receipts applied", metadata: [
                "receipts.count": "\(receipts.count)", "receipts.new": "\(applied.newReceipts)",
                "receipts.deliveries": "\(applied.matchedDeliveries)",
            ])
        }
    }

    /// Runs `body` until it succeeds, backing off; false when the service
    /// stopped first. Data errors propagate.
    private func retryingWhileAway(_ what: String, _ body: () async throws -> Void) async throws -> Bool {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                try await body()
                return true
            } catch let error as PostgresError where error.isDataError {
                throw error
            } catch {
                if isStopping || Task.isCancelled { return false }
                logger.warning("\(what); retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Dead-letters every rejected receipt (waiting for the brokers'
    /// acknowledgements; one Kafka refuses for its size goes smaller, see
    /// `DeadLetterFit`) and records it in `intake_rejections`.
    private func record(_ items: [Rejected], producer: KafkaProducer, store: ReceiptStore) async throws -> Bool {
        let outgoing = items.map { item in
            var headers = RetryHeaders()
            headers.reason = "\(item.kind): \(item.reason)"
            headers.lastError = item.reason
            headers.firstFailureAt = Date()
            headers.setOrigin(from: item.message)
            return OutgoingMessage(topic: configuration.deadLetterTopic, key: item.message.key, value: item.message.value,
                                   headers: headers.kafkaHeaders, label: item.kind, origin: MessageOrigin(item.message))
        }
        var rows = try await OutgoingProducer(producer: producer, deadLetterTopic: configuration.deadLetterTopic, logger: logger)
            .produce(outgoing).failed
        let failedOffsets = Set(rows.map { MessageOrigin(topic: $0.topic, partition: $0.partition, offset: $0.offset) })
        for item in items where !failedOffsets.contains(MessageOrigin(item.message)) {
            rows.append(IntakeRejection(notificationID: nil, app: nil, kind: item.kind, reason: item.reason,
                                        topic: item.message.topic, partition: item.message.partition,
                                        offset: item.message.offset, fieldPath: item.fieldPath))
            logger.warning("receipt rejected and dead-lettered", metadata: [
                "kafka.partition": "\(item.message.partition)", "kafka.offset": "\(item.message.offset)",
                "receipts.reason": "\(item.kind): \(item.reason)",
            ])
        }
        let written = rows
        return try await retryingWhileAway("receipt rejections not written") {
            try await store.recordRejections(written)
        }
    }

    private func recordTotals(applied: [Receipt], rejected: Int) {
        for kind in Receipt.Kind.allCases {
            let n = applied.filter { $0.kind == kind }.count
            if n > 0 { receiptCounter(kind).increment(by: n) }
        }
        if rejected > 0 { invalidReceiptCounter.increment(by: rejected) }
        updateTotals(applied: applied.count, deadLettered: rejected)
    }
}
