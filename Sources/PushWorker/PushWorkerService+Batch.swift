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
        try await retrying("write outcomes") { try await context.processor.store.write(outcome) }
        for (tp, offset) in context.book.complete(ticket) {
            do { try context.consumer.storeOffset(tp, offset: offset) } catch {
                logger.warning("offset store failed", metadata: ["kafka.partition": "\(tp)", "kafka.offset": "\(offset)", "error": "\(error)"])
            }
        }
        counters.withLock {
            $0.batches += 1
            $0.messages += messages.count
            $0.deliveries += outcome.deliveries.count
            $0.suppressed += outcome.suppressed
            $0.rejectedMessages += outcome.rejections.count
            $0.produced += outcome.outgoing.count
        }
    }

    /// Runs `body` until it succeeds, backing off while the database or the
    /// brokers are unreachable. Other errors propagate (the worker stops
    /// with the batch's offsets unstored).
    func retrying<T: Sendable>(_ what: String, _ body: () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where error.isRetriable {
                logger.warning("database unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            } catch let error as KafkaError where error.isRetriable && !error.isFatal {
                logger.warning("Kafka unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }
}
