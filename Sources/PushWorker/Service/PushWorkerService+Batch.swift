import Foundation
import PushKafka
import PushPostgres

extension PushWorkerService {
    /// Processes one batch; produces its retry and dead-letter messages and
    /// waits for their delivery reports; writes its outcomes (retrying while
    /// Kafka or Postgres is away); only then completes and stores its offsets.
    ///
    /// A batch whose deliveries do not fit in half the worker's delivery
    /// permits is handled in parts, one after the other, each sent and
    /// written before the next takes its permits: memory follows deliveries,
    /// not messages. The offsets are stored once every part is written, so a
    /// worker killed between parts redelivers the batch and the ledger
    /// suppresses what the written parts sent.
    ///
    /// A message or a record that PostgreSQL or Kafka refuses for its own
    /// sake (a data error, a message too large) is isolated from the rest of
    /// the batch, recorded as rejected with the error, and the batch goes
    /// on: nothing a producer sends can hold a partition for ever.
    func handle(_ messages: [KafkaMessage], ticket: OffsetBook.Ticket, _ context: BatchContext) async throws {
        let processor = context.processor
        let policy = processor.intakePolicy()
        let budget = context.permits.partBudget
        // Decoded a part at a time (and one message past it, so the part knows where it
        // ends): a batch of wide messages never holds more than a part decoded.
        var ready: [BatchProcessor.Decoded] = []
        var counted: [AppUser: Int] = [:]
        var handled = Set<Int>()  // keys of the parts before (a repeat in a later part is suppressed)
        var least = 0
        var next = messages.startIndex
        var parts = 0
        while next < messages.endIndex || !ready.isEmpty {
            while next < messages.endIndex, ready.isEmpty || least <= budget {
                let entry = processor.decode(messages[next], policy: policy)
                next += 1
                least += entry.leastDeliveries
                ready.append(entry)
            }
            let part = try await processIsolating(ready[...], counted: counted, handled: handled, context)
            defer { context.permits.release(part.permits) }
            try await finish(part, firstOfBatch: parts == 0, context)
            least -= ready.prefix(part.taken).reduce(0) { $0 + $1.leastDeliveries }
            ready.removeFirst(part.taken)
            counted = Self.counts(part.counted, of: ready)
            if !ready.isEmpty || next < messages.endIndex { handled.formUnion(part.handled.lazy.map(BatchProcessor.handledKey)) }
            parts += 1
        }
        try Task.checkCancellation()
        for (tp, offset) in context.book.complete(ticket) {
            do { try context.consumer.storeOffset(tp, offset: offset) } catch {
                logger.warning("offset store failed", metadata: ["kafka.partition": "\(tp)", "kafka.offset": "\(offset)", "error": "\(error)"])
            }
        }
    }

    /// Produces a processed part's retries and dead letters (waiting for Kafka's
    /// acknowledgement) and writes its outcome.
    private func finish(_ part: BatchProcessor.Processed, firstOfBatch: Bool, _ context: BatchContext) async throws {
        var outcome = part.outcome
        if !outcome.outgoing.isEmpty {
            let produced = try await OutgoingProducer(producer: context.producer, deadLetterTopic: topics.deadLetter, logger: logger)
                .produce(outcome.outgoing)
            for _ in produced.failed { countPoison(.deadLetter) }
            outcome.rejections += produced.failed
            if !produced.rerouted.isEmpty { outcome.deadLetterRerouted(produced.rerouted) }
            outcome.outgoing = produced.sent
        }
        let written = try await writeIsolating(outcome, context)
        count(outcome, written: written, messages: part.taken, batch: firstOfBatch)
    }

    /// The counts of the users the waiting messages name: only those are worth keeping.
    private static func counts(_ counted: [AppUser: Int], of waiting: [BatchProcessor.Decoded]) -> [AppUser: Int] {
        guard !counted.isEmpty else { return [:] }
        var kept: [AppUser: Int] = [:]
        for user in waiting.lazy.flatMap(\.users) {
            if let count = counted[user] { kept[user] = count }
        }
        return kept
    }

    /// `process` of the batch's next part, with a part that PostgreSQL
    /// refuses with a data error halved until the message behind it is found
    /// and dead-lettered (a part of one message). Every query of `process`
    /// runs before its first send, so a refused part has sent nothing; the
    /// messages after a smaller part are simply the next part.
    private func processIsolating(_ batch: ArraySlice<BatchProcessor.Decoded>, counted: [AppUser: Int], handled: Set<Int>,
                                  _ context: BatchContext) async throws -> BatchProcessor.Processed
    {
        do {
            return try await retrying("process batch") {
                try await context.processor.process(batch, permits: context.permits, counted: counted, handled: handled)
            }
        } catch let error as PostgresError where error.isDataError {
            guard batch.count > 1, let first = batch.first else {
                countPoison(.processing)
                let outcome = batch.first.map { context.processor.poisoned($0.message, error) } ?? BatchOutcome()
                return BatchProcessor.Processed(outcome: outcome, taken: batch.count, permits: 0)
            }
            logger.warning("batch refused by PostgreSQL; isolating the message behind it", metadata: [
                "kafka.partition": "\(first.message.topicPartition)", "kafka.offset": "\(first.message.offset)",
                "worker.messages": "\(batch.count)", "error": "\(error)",
            ])
            return try await processIsolating(batch.prefix(batch.count / 2), counted: counted, handled: handled, context)
        }
    }

    /// `store.writeIsolating` with the worker's backoff while the database is away.
    private func writeIsolating(_ outcome: BatchOutcome, _ context: BatchContext) async throws -> [DeliveryRecord] {
        let result = try await context.processor.store.writeIsolating(outcome, logger: logger) { body in
            try await self.retrying("write outcomes", body)
        }
        for _ in 0..<result.refused { countPoison(.write) }
        return result.written
    }

    private func countPoison(_ stage: PoisonStage) {
        counters.withLock { $0.poisonByStage[stage.rawValue, default: 0] += 1 }
    }

    /// `written`: the batch's delivery rows as the store wrote them (one per key).
    private func count(_ outcome: BatchOutcome, written: [DeliveryRecord], messages: Int, batch: Bool) {
        counters.withLock { c in
            if batch { c.batches += 1 }
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
            } catch let error as PostgresError where error.kind == .server && !error.isDataError {
                // Refused for a reason no row is to blame for (a missing table, a
                // permission, a full disk): every batch would fail alike. Hold, loudly,
                // until an operator fixes the database; stopping would only restart into it.
                logger.error("database refused the batch; holding until it is fixed",
                             metadata: ["worker.step": "\(what)", "error": "\(error)"])
                try await Task.sleep(for: .seconds(5))
            }
            try await Task.sleep(for: delay)
            // Short cap: a restarted database or a broker back up is used within a second.
            delay = min(delay * 2, .seconds(1))
        }
    }
}
