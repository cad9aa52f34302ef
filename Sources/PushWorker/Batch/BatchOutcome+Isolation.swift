import Foundation
import PushCore

extension BatchOutcome {
    /// Rows the outcome writes: what write isolation bisects.
    var rowCount: Int {
        deliveries.count + attempts.count + invalidations.count + rejections.count + deviceUpdates.count
    }

    /// The rows split in two halves of about equal size (nil for one row or
    /// none). Each half is written on its own, so a row PostgreSQL refuses is
    /// found in log₂(rows) steps and everything else still lands. Only the
    /// rows are split: counters, retries and dead letters stay with the batch.
    func splitRows() -> (BatchOutcome, BatchOutcome)? {
        let total = rowCount
        guard total > 1 else { return nil }
        var room = total / 2
        var first = BatchOutcome()
        var second = BatchOutcome()
        first.origins = origins
        second.origins = origins
        func take<T>(_ items: [T]) -> ([T], [T]) {
            let n = min(room, items.count)
            room -= n
            return (Array(items.prefix(n)), Array(items.dropFirst(n)))
        }
        (first.deliveries, second.deliveries) = take(deliveries)
        (first.attempts, second.attempts) = take(attempts)
        (first.invalidations, second.invalidations) = take(invalidations)
        (first.rejections, second.rejections) = take(rejections)
        let devicesFirst = min(room, deviceUpdates.count)
        first.deviceUpdates = Array(deviceUpdates.prefix(devicesFirst))
        second.deviceUpdates = Array(deviceUpdates.dropFirst(devicesFirst))
        first.deviceOrigins = Array(deviceOrigins.prefix(devicesFirst))
        second.deviceOrigins = Array(deviceOrigins.dropFirst(devicesFirst))
        return (first, second)
    }

    /// The rejection row standing for the one row of this outcome that
    /// PostgreSQL refused with `error`; nil when that row is itself a
    /// rejection or an invalidation (nothing further to record it as).
    func refusedRowRejection(_ error: any Error) -> IntakeRejection? {
        let kind = PoisonStage.write.rawValue
        let unknown = MessageOrigin(topic: "(unknown)", partition: -1, offset: -1)
        func row(_ id: UUID?, _ app: String?, _ what: String, _ origin: MessageOrigin?) -> IntakeRejection {
            let at = origin ?? unknown
            return IntakeRejection(notificationID: id, app: app, kind: kind, reason: "\(what) refused: \(error)",
                                   topic: at.topic, partition: at.partition, offset: at.offset, fieldPath: nil)
        }
        if let d = deliveries.first {
            return row(d.key.notificationID, d.app, "deliveries row for token \(d.key.token.prefix(80))", origins[d.key.notificationID])
        }
        if let a = attempts.first {
            return row(a.key.notificationID, nil, "delivery_attempts row \(a.attempt) for token \(a.key.token.prefix(80))",
                       origins[a.key.notificationID])
        }
        if let e = deviceUpdates.first {
            return row(nil, e.app, "device \(e.action.rawValue) for token \(e.token.prefix(80))", deviceOrigins.first)
        }
        return nil
    }
}

extension BatchOutcome {
    /// The notifications in `ids` were to be retried, but Kafka refused their
    /// retry message and they went to the dead-letter topic instead: their
    /// `retrying` rows say so.
    mutating func deadLetterRerouted(_ ids: Set<UUID>) {
        for i in deliveries.indices where deliveries[i].status == .retrying && ids.contains(deliveries[i].key.notificationID) {
            deliveries[i].status = .deadLettered
            deliveries[i].detail = "retry message refused by Kafka; dead-lettered"
            deliveries[i].finalAt = Date()
        }
    }
}
