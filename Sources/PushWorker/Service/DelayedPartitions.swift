import Foundation
import PushKafka

/// Messages that may not go yet, held per partition while that partition is
/// paused: retries not due, parked messages whose provider cannot take them.
/// A partition's messages are released in offset order once due, each
/// looked at again first (a provider still down holds it longer); the
/// partition is resumed when nothing is held for it any more. Owned by the
/// poll loop alone.
struct DelayedPartitions {
    private var held: [KafkaTopicPartition: [(message: KafkaMessage, dueAt: Date?)]] = [:]
    private var newlyPaused: Set<KafkaTopicPartition> = []
    /// Keys, values and headers of the messages held (`KafkaMessage.byteCount`):
    /// part of what `worker.max_in_flight_bytes` bounds.
    private(set) var heldBytes = 0

    /// Messages held now, over all partitions.
    var heldCount: Int { held.values.reduce(0) { $0 + $1.count } }

    /// Of `inFlight` (messages taken and not finished, per partition), those
    /// not held here: what the message bound counts. A held message sends
    /// nothing and holds no delivery until it is due.
    func working(_ inFlight: [KafkaTopicPartition: Int]) -> [KafkaTopicPartition: Int] {
        inFlight.reduce(into: [:]) { out, entry in out[entry.key] = max(0, entry.value - (held[entry.key]?.count ?? 0)) }
    }

    /// Holds `message` if its partition is held already (it is looked at
    /// when it comes first) or it is not due; `due` is asked only when the
    /// message would go on a nil answer.
    mutating func hold(_ message: KafkaMessage, now: Date, due: () -> Date?) -> Bool {
        let tp = message.topicPartition
        if held[tp] != nil {
            held[tp]?.append((message, nil))
            heldBytes += message.byteCount
            return true
        }
        guard let dueAt = due(), dueAt > now else { return false }
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
    /// A message whose held due time has come, or that was held behind
    /// another and now comes first, is asked about (`recheck`: its due time
    /// now, nil for now): one still held keeps its place, with its new due
    /// time, and everything behind it waits.
    mutating func due(at now: Date, recheck: (KafkaMessage) -> Date?,
                      releaseInto release: ([KafkaMessage]) -> Void) -> [KafkaTopicPartition] {
        var emptied: [KafkaTopicPartition] = []
        for (tp, entries) in held {
            var ready: [KafkaMessage] = []
            var rest = entries[...]
            var postponed = false
            while let first = rest.first, (first.dueAt ?? now) <= now {
                if let later = recheck(first.message), later > now {
                    rest[rest.startIndex].dueAt = later
                    postponed = true
                    break
                }
                ready.append(first.message)
                rest = rest.dropFirst()
            }
            guard !ready.isEmpty else {
                if postponed { held[tp] = Array(rest) }
                continue
            }
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
