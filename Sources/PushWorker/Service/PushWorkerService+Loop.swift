import Foundation
import PushCore
import PushKafka

extension PushWorkerService {
    /// The poll loop. It never waits for a batch: batches run as child tasks
    /// and complete on their own. Each poll takes at most the room left under
    /// the in-flight bound, so the bound holds without pausing; at the bound
    /// the loop waits for a batch to finish (a pause would drop librdkafka's
    /// prefetched messages and cost a refetch). Only when no batch finishes
    /// within `boundPatience` does it pause the assigned partitions and keep
    /// polling (rebalance callbacks keep running, the member stays in the
    /// group), resuming exactly what it paused once below the bound.
    ///
    /// One loop per lane, each with its own consumer and offsets; the lanes
    /// share the delivery permits (`DeliveryPermits` serves interactive work
    /// first) and the pipeline.
    func consume(_ context: LaneContext) async throws {
        let batchSize = configuration.worker.batchSize
        let totalLimit = configuration.worker.inFlightLimit
        let partitionLimit = configuration.worker.maxInFlightPerPartition
        let patience = configuration.worker.boundPatience
        let linger = configuration.worker.pollLinger
        let byteLimit = configuration.worker.maxInFlightBytes
        var delayed = DelayedPartitions()
        let dues = DueTimes(topics: topics, router: context.router)
        var pauses = PartitionPauses()
        var atBoundSince: ContinuousClock.Instant?
        try await withThrowingDiscardingTaskGroup { group in
            // One batch per poll (all partitions): the ledger check and the outcome
            // transaction are paid once for up to `batchSize` messages.
            func dispatch(_ messages: [KafkaMessage]) {
                guard !messages.isEmpty else { return }
                let ticket = context.book.dispatch(messages)
                let bytes = messages.reduce(0) { $0 + $1.byteCount }
                context.bytes.withLock { $0 += bytes }
                // A yielding lane's batch runs at a lower task priority: where it waits beside
                // the other lane's work (a PostgreSQL connection), that work goes first.
                group.addTask(priority: context.lane.yieldsToOtherLanes ? .low : nil) {
                    try await self.runBatch(messages, ticket: ticket, bytes: bytes, context)
                }
            }
            func forget(_ gone: [KafkaTopicPartition]) {
                delayed.drop(gone)
                pauses.drop(gone)
            }
            while !isStopping {
                if let failure = batchFailure.withLock({ $0 }) { throw failure }
                // Wide messages (a thousand tokens each) fill memory long before the
                // message bound: past the byte bound (batches' messages and held retries)
                // there is no room either.
                // Messages held until due (a retry, a parked message whose provider cannot take
                // it) send nothing and hold no delivery: they take no room under the message
                // bound, or a provider's outage would stop intake through its parked messages.
                // Their bytes count: memory is memory.
                let byteRoom = byteLimit - context.bytes.withLock { $0 } - delayed.heldBytes
                let room = byteRoom > 0 ? totalLimit - (context.book.inFlightTotal() - delayed.heldCount) : 0
                var stuck = false
                if room > 0 {
                    atBoundSince = nil
                } else {
                    let since = atBoundSince ?? ContinuousClock.now
                    atBoundSince = since
                    let waited = ContinuousClock.now - since
                    if waited < patience {
                        health?.heartbeat()
                        await context.completions.wait(timeout: patience - waited)
                        continue
                    }
                    stuck = true
                }
                // Stuck at the bound: pause everything before polling, so the poll serves
                // rebalances and returns nothing.
                let total = stuck ? (byteRoom > 0 ? totalLimit : 0) : Int.max
                applyBackpressure(&pauses, context, total: total, perPartition: partitionLimit, delayed: delayed)
                let throttled = !pauses.partitions(.backpressure).isEmpty
                // While throttled, poll briefly so a resume follows a completion closely, and
                // without linger: the room is small.
                let polled = try await context.consumer.poll(
                    maxMessages: max(1, min(batchSize, room)), maxBytes: max(1, byteRoom), timeout: throttled ? .milliseconds(10) : .milliseconds(100),
                    linger: throttled ? .zero : linger)
                health?.heartbeat()
                forget(context.revoked.withLock { r in defer { r = [] }; return r })
                let now = Date()
                var ready: [KafkaMessage] = []
                for tp in delayed.due(at: now, recheck: { dues.due(of: $0, now: now) }, releaseInto: { ready += $0 })
                    where pauses.remove(.delayedRetry, tp) {
                    try? context.consumer.resume([tp])
                }
                if !polled.isEmpty {
                    countConsumed(polled)
                    for message in context.book.begin(polled) {
                        if delayed.hold(message, now: now, due: { dues.due(of: message, now: now) }) {
                            if delayed.justPaused(message.topicPartition), pauses.add(.delayedRetry, message.topicPartition) {
                                try? context.consumer.pause([message.topicPartition])
                            }
                        } else {
                            ready.append(message)
                        }
                    }
                }
                dispatch(ready)
                applyBackpressure(&pauses, context, total: total, perPartition: partitionLimit, delayed: delayed)
            }
            try await drain(context, forget: forget, cancel: { group.cancelAll() })
        }
    }

    /// Pauses partitions at the in-flight bound and resumes those backpressure
    /// paused. Messages held until due count for their bytes only (see `consume`).
    private func applyBackpressure(_ pauses: inout PartitionPauses, _ context: LaneContext, total: Int, perPartition: Int,
                                   delayed: DelayedPartitions) {
        let inFlight = context.book.inFlightByPartition()
        let change = pauses.backpressure(inFlight: delayed.working(inFlight), total: total, perPartition: perPartition)
        if !change.pause.isEmpty { try? context.consumer.pause(change.pause) }
        if !change.resume.isEmpty { try? context.consumer.resume(change.resume) }
        let throttled = pauses.partitions(.backpressure).count
        let sum = inFlight.values.reduce(0, +)
        let bytes = context.bytes.withLock { $0 } + delayed.heldBytes
        let deliveries = context.permits.inUse
        counters.withLock {
            $0.inFlightByLane[context.lane] = sum
            $0.inFlightBytesByLane[context.lane] = bytes
            $0.deliveriesInFlight = deliveries
            $0.partitionsBackpressuredByLane[context.lane] = throttled
            $0.backpressurePauses += change.pause.count
        }
    }

    /// Stores the offsets a finished batch lets through (the lowest unfinished
    /// offset of each of its partitions); a failure is logged, and the next
    /// batch of the partition stores past it.
    private func storeOffsets(_ offsets: [KafkaTopicPartition: Int64], _ consumer: KafkaConsumer) {
        for (tp, offset) in offsets {
            do { try consumer.storeOffset(tp, offset: offset) } catch {
                logger.warning("offset store failed", metadata: ["kafka.partition": "\(tp)", "kafka.offset": "\(offset)", "error": "\(error)"])
            }
        }
    }

    private func countConsumed(_ polled: [KafkaMessage]) {
        var byTopic: [String: Int] = [:]
        for m in polled { byTopic[m.topic, default: 0] += 1 }
        counters.withLock { c in for (t, n) in byTopic { c.consumedByTopic[t, default: 0] += n } }
    }

    /// One batch as a child task: the pipeline takes it to its written
    /// outcome, then its offsets are stored. A cancelled batch (drain
    /// timeout) is left unfinished: nothing stored, its offsets stay in flight.
    private func runBatch(_ messages: [KafkaMessage], ticket: OffsetBook.Ticket, bytes: Int, _ context: LaneContext) async throws {
        defer { context.completions.fire() }
        // Runs first (defers run in reverse): the loop the fire wakes sees the bytes gone.
        defer { context.bytes.withLock { $0 -= bytes } }
        do {
            try await context.pipeline.run(messages, lane: context.lane)
            try Task.checkCancellation()
            storeOffsets(context.book.complete(ticket), context.consumer)
        } catch where Task.isCancelled || error is CancellationError {
            context.book.abandon(ticket)
        } catch {
            // Stop taking new work at once: this batch's offsets stay unstored.
            context.book.abandon(ticket)
            batchFailure.withLock { $0 = $0 ?? error }
            throw error
        }
    }

    /// Shutdown: pause everything, keep polling (rebalances are still served)
    /// while the batches already taken finish, bounded by the drain timeout;
    /// then cancel what is left (left unfinished, offsets unstored).
    private func drain(_ context: LaneContext, forget: ([KafkaTopicPartition]) -> Void, cancel: () -> Void) async throws {
        if let assigned = try? context.consumer.assignment() {
            try? context.consumer.pause(assigned.filter { !context.consumer.pausedPartitions.contains($0) })
        }
        let deadline = ContinuousClock.now + configuration.worker.drainTimeout
        while context.book.dispatchedTotal() > 0, ContinuousClock.now < deadline {
            if batchFailure.withLock({ $0 }) != nil { break }
            // Messages fetched before the pause are ignored: never begun, never stored.
            _ = try? await context.consumer.poll(maxMessages: 1000, timeout: .milliseconds(50))
            forget(context.revoked.withLock { r in defer { r = [] }; return r })
        }
        let left = context.book.dispatchedTotal()
        if left > 0 {
            logger.warning("drain timed out; unfinished messages are left unstored and will be redelivered",
                           metadata: ["worker.messages_in_flight": "\(left)"])
            cancel()
        }
    }

    /// Commits the stored offsets once more before closing. A commit during a
    /// rebalance fails with REBALANCE_IN_PROGRESS: poll (nothing is taken: all
    /// partitions are paused and polled messages are ignored) so the rebalance
    /// is served, and try again, a bounded number of times.
    func finalCommit(_ consumer: KafkaConsumer) async {
        for attempt in 1...5 {
            do {
                try await consumer.commit()
                return
            } catch let error as KafkaError where attempt < 5 && (error.isRebalanceInProgress || error.isRetriable) {
                logger.info("final commit deferred; serving the rebalance first",
                            metadata: ["error": "\(error)", "worker.attempt": "\(attempt)"])
                _ = try? await consumer.poll(maxMessages: 1000, timeout: .milliseconds(200 * attempt))
            } catch {
                logger.warning("final offset commit failed; the next owner resumes from the last committed offset and the ledger suppresses re-sends",
                               metadata: ["error": "\(error)"])
                return
            }
        }
    }
}
