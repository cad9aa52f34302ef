import PushCore
import PushKafka

/// The offset trackers of the partitions this worker holds, shared between
/// the poll loop (which begins offsets) and batch tasks (which complete them).
/// A revoked partition's state is dropped; completions that arrive for it
/// afterwards (older generation) are ignored, so nothing is stored for a
/// partition this worker no longer owns.
final class OffsetBook: Sendable {
    struct PartitionState {
        var tracker = PartitionOffsetTracker()
        var generation: UInt64
        /// Messages handed to batch tasks and not yet completed (held ones excluded).
        var dispatched = 0

        /// Completes a batch's `offsets` of this partition; the offset that may
        /// now be stored, if the completed prefix grew.
        mutating func complete(_ offsets: [Int64]) -> Int64? {
            var store: Int64?
            for offset in offsets {
                if let next = tracker.complete(offset) { store = next }
            }
            dispatched -= offsets.count
            return store
        }
    }

    /// Offsets of one batch, by partition, with the generation they began in.
    struct Ticket: Sendable {
        var offsets: [KafkaTopicPartition: (generation: UInt64, offsets: [Int64])]
    }

    // Every change to a partition's state is made in place, through the
    // dictionary's subscript (`s.partitions[tp]?.…`): a copy taken out and
    // written back shares the tracker's arrays with the dictionary, so the
    // tracker's next append copied them whole, once per message.
    private let state = Locked<(partitions: [KafkaTopicPartition: PartitionState], nextGeneration: UInt64)>(([:], 1))

    func assign(_ partitions: [KafkaTopicPartition]) {
        state.withLock { s in
            for tp in partitions {
                s.partitions[tp] = PartitionState(generation: s.nextGeneration)
                s.nextGeneration += 1
            }
        }
    }

    func revoke(_ partitions: [KafkaTopicPartition]) {
        state.withLock { s in
            for tp in partitions { s.partitions[tp] = nil }
        }
    }

    /// Registers polled messages as in flight (dispatched now or held for
    /// later); returns those accepted (a re-delivered offset is dropped).
    func begin(_ messages: [KafkaMessage]) -> [KafkaMessage] {
        state.withLock { s in
            var accepted: [KafkaMessage] = []
            for message in messages {
                // A message of a partition revoked while this poll was collecting is
                // not ours any more: its new owner processes it.
                if s.partitions[message.topicPartition]?.tracker.begin(message.offset) == true { accepted.append(message) }
            }
            return accepted
        }
    }

    /// A ticket for begun messages about to be dispatched to a batch task.
    func dispatch(_ messages: [KafkaMessage]) -> Ticket {
        state.withLock { s in
            var ticket = Ticket(offsets: [:])
            for message in messages {
                let tp = message.topicPartition
                guard let generation = s.partitions[tp]?.generation else { continue }
                s.partitions[tp]?.dispatched += 1
                ticket.offsets[tp, default: (generation, [])].offsets.append(message.offset)
            }
            return ticket
        }
    }


    /// Begun, uncompleted messages (dispatched or held) of every assigned partition.
    func inFlightByPartition() -> [KafkaTopicPartition: Int] {
        state.withLock { s in s.partitions.mapValues(\.tracker.inFlight) }
    }

    /// Begun, uncompleted messages (dispatched or held) of all partitions:
    /// what the worker-wide in-flight bound counts.
    func inFlightTotal() -> Int {
        state.withLock { s in s.partitions.values.reduce(0) { $0 + $1.tracker.inFlight } }
    }

    /// Dispatched, uncompleted messages of all partitions.
    func dispatchedTotal() -> Int {
        state.withLock { s in s.partitions.values.reduce(0) { $0 + $1.dispatched } }
    }

    /// A batch given up (cancelled at shutdown): no longer counted as dispatched,
    /// but its offsets stay in flight, so nothing at or past them is ever stored.
    func abandon(_ ticket: Ticket) {
        state.withLock { s in
            for (tp, entry) in ticket.offsets {
                guard s.partitions[tp]?.generation == entry.generation else { continue }
                s.partitions[tp]?.dispatched -= entry.offsets.count
            }
        }
    }

    /// Dispatched, uncompleted messages of these partitions.
    func dispatchedInFlight(_ partitions: [KafkaTopicPartition]) -> Int {
        state.withLock { s in partitions.reduce(0) { $0 + (s.partitions[$1]?.dispatched ?? 0) } }
    }

    /// Completes a batch; returns the offsets that may now be stored.
    func complete(_ ticket: Ticket) -> [KafkaTopicPartition: Int64] {
        state.withLock { s in
            var store: [KafkaTopicPartition: Int64] = [:]
            for (tp, entry) in ticket.offsets {
                guard s.partitions[tp]?.generation == entry.generation else { continue }
                if let next = s.partitions[tp]?.complete(entry.offsets) { store[tp] = next }
            }
            return store
        }
    }
}
