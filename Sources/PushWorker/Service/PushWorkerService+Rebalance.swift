import Foundation
import PushCore
import PushKafka

extension PushWorkerService {
    /// Assigned partitions get fresh trackers; revoked ones are drained
    /// (bounded) so their finished work is stored and committed before they
    /// move; lost ones are dropped with nothing stored.
    func installRebalanceHandler(_ context: LaneContext) {
        let logger = self.logger
        let drainLimit = configuration.worker.revokeDrainTimeout
        let book = context.book, consumer = context.consumer, lane = context.lane
        consumer.setRebalanceHandler { event in
            switch event {
            case .assigned(let partitions):
                book.assign(partitions)
                // A partition we paused while holding retries, lost, and now back: resume it
                // (only partitions librdkafka reports paused, so nothing rewinds).
                let stillPaused = partitions.filter { consumer.pausedPartitions.contains($0) }
                if !stillPaused.isEmpty { try? consumer.resume(stillPaused) }
                self.noteAssignment(lane, adding: partitions, removing: [])
                logger.info("partitions assigned", metadata: [
                    "kafka.partitions": "\(partitions.map(\.description))", "worker.lane": "\(lane.rawValue)",
                ])
            case .revoked(let partitions):
                let deadline = ContinuousClock.now + drainLimit
                while book.dispatchedInFlight(partitions) > 0, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                let left = book.dispatchedInFlight(partitions)
                book.revoke(partitions)
                context.revoked.withLock { $0 += partitions }
                self.noteAssignment(lane, adding: [], removing: partitions)
                logger.info("partitions revoked", metadata: [
                    "kafka.partitions": "\(partitions.map(\.description))", "worker.undrained": "\(left)",
                    "worker.lane": "\(lane.rawValue)",
                ])
            case .lost(let partitions):
                book.revoke(partitions)
                context.revoked.withLock { $0 += partitions }
                self.noteAssignment(lane, adding: [], removing: partitions)
                logger.warning("partitions lost", metadata: [
                    "kafka.partitions": "\(partitions.map(\.description))", "worker.lane": "\(lane.rawValue)",
                ])
            }
        }
    }

    /// Keeps the lanes' assignments, and the partition counts counters and
    /// health report (both lanes together), in step with a rebalance.
    private func noteAssignment(_ lane: Lane, adding: [KafkaTopicPartition], removing: [KafkaTopicPartition]) {
        let count = assigned.withLock { all -> Int in
            all[lane, default: []].formUnion(adding)
            all[lane, default: []].subtract(removing)
            return all.values.reduce(0) { $0 + $1.count }
        }
        counters.withLock { $0.partitionsAssigned = count }
        health?.setPartitionsAssigned(count)
    }
}
