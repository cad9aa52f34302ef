import Foundation
import PushKafka

/// Retry messages that are not due yet, held per partition while that
/// partition is paused. A partition's messages are released in offset order
/// once due; the partition is resumed when nothing is held for it any more.
/// Owned by the poll loop alone.
struct DelayedPartitions {
    private var held: [KafkaTopicPartition: [(message: KafkaMessage, dueAt: Date?)]] = [:]
    private var newlyPaused: Set<KafkaTopicPartition> = []
    /// Keys, values and headers of the messages held (`KafkaMessage.byteCount`):
    /// part of what `worker.max_in_flight_bytes` bounds.
    private(set) var heldBytes = 0

    /// Holds `message` if its partition is held already or it is not due.
    mutating func hold(_ message: KafkaMessage, dueAt: Date?, now: Date) -> Bool {
        let tp = message.topicPartition
        if held[tp] != nil {
            held[tp]?.append((message, dueAt))
            heldBytes += message.byteCount
            return true
        }
        guard let dueAt, dueAt > now else { return false }
        held[tp] = [(message, dueAt)]
        heldBytes += message.byteCount
        newlyPaused.insert(tp)
        return true
    }

    /// True once, right after `hold` started holding this partition.
    mutating func justPaused(_ tp: KafkaTopicPartition) -> Bool {
        newlyPaused.remove(tp) != nil
    }

    /// Releases what is due; returns the partitions now empty (to resume).
    mutating func due(at now: Date, releaseInto release: ([KafkaMessage]) -> Void) -> [KafkaTopicPartition] {
        var emptied: [KafkaTopicPartition] = []
        for (tp, entries) in held {
            var ready: [KafkaMessage] = []
            var rest = entries[...]
            while let first = rest.first, (first.dueAt ?? now) <= now {
                ready.append(first.message)
                rest = rest.dropFirst()
            }
            guard !ready.isEmpty else { continue }
            heldBytes -= ready.reduce(0) { $0 + $1.byteCount }
            release(ready)
            if rest.isEmpty {
                held[tp] = nil
                emptied.append(tp)
            } else {
                held[tp] = Array(rest)
            }
        }
        return emptied
    }

    /// Forgets partitions this worker no longer owns (not resumed: not ours).
    mutating func drop(_ partitions: [KafkaTopicPartition]) {
        for tp in partitions {
            heldBytes -= held[tp]?.reduce(0) { $0 + $1.message.byteCount } ?? 0
            held[tp] = nil
            newlyPaused.remove(tp)
        }
    }
}
