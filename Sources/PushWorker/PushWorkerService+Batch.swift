import Foundation
import PushKafka
import PushPostgres

extension PushWorkerService {
    /// Processes one batch; produces its retry and dead-letter messages and
    /// waits for their delivery reports; writes its outcomes (retrying while
    /// Kafka or Postgres is away); only then completes and stores its offsets.
    func handle(_ messages: [KafkaMessage], ticket: OffsetBook.Ticket, _ context: BatchContext) async throws {
        let outcome = try await retrying("process batch") { try await context.processor.process(messages) }
        if !outcome.outgoing.isEmpty {
            try await retrying("produce retries and dead letters") {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for message in outcome.outgoing {
                        group.addTask {
                            try await context.producer.send(topic: message.topic, key: message.key, value: message.value, headers: message.headers)
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        let written = try await retrying("write outcomes") { try await context.processor.store.write(outcome) }
        try Task.checkCancellation()
        for (tp, offset) in context.book.complete(ticket) {
            do { try context.consumer.storeOffset(tp, offset: offset) } catch {
                logger.warning("offset store failed", metadata: ["kafka.partition": "\(tp)", "kafka.offset": "\(offset)", "error": "\(error)"])
            }
        }
        count(outcome, written: written, messages: messages.count)
    }

    /// `written`: the batch's delivery rows as the store wrote them (one per key).
    private func count(_ outcome: BatchOutcome, written: [DeliveryRecord], messages: Int) {
        counters.withLock { c in
            c.batches += 1
            c.messages += messages
            c.deliveries += outcome.deliveries.count
            c.suppressed += outcome.suppressed
            c.rejectedMessages += outcome.rejections.count
            c.produced += outcome.outgoing.count
            c.deviceUpdates += outcome.deviceUpdates.count
            for d in written {
                guard let provider = d.provider else { c.usersWithoutDevices += 1; continue }
                let key = WorkerCounters.SentKey(provider: provider, app: d.app, status: d.status, reason: d.providerReason ?? "")
                c.sent[key, default: 0] += 1
            }
            for m in outcome.outgoing {
                if m.topic == topics.deadLetter {
                    c.deadLettersByReason[m.label.isEmpty ? "other" : m.label, default: 0] += 1
                } else {
                    c.retriesByTier[m.label, default: 0] += 1
                }
            }
        }
    }

    /// Runs `body` until it succeeds, backing off while the database or the
    /// brokers are unreachable. Other errors propagate (the worker stops
    /// with the batch's offsets unstored).
    func retrying<T: Sendable>(_ what: String, _ body: () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        while true {
            try Task.checkCancellation()
            do {
                return try await body()
            } catch let error as PostgresError where error.isRetriable {
                logger.warning("database unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            } catch let error as KafkaError where error.isRetriable && !error.isFatal {
                logger.warning("Kafka unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            }
            try await Task.sleep(for: delay)
            // Short cap: a restarted database or a broker back up is used within a second.
            delay = min(delay * 2, .seconds(1))
        }
    }
}
