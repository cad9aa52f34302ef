import PushKafka

/// Why each partition is paused, so the poll loop pauses a partition when its
/// first reason appears and resumes it only when its last reason goes. Two
/// owners (delayed retries and backpressure) can then never resume what the
/// other paused, and nothing is resumed that was not paused (librdkafka 2.0.2
/// can rewind a partition resumed without a pause). Pure; owned by the poll loop.
struct PartitionPauses {
    enum Reason: Hashable {
        /// A retry message that is not due yet is held for this partition.
        case delayedRetry
        /// The in-flight bound (per partition or per worker) is reached.
        case backpressure
        /// A provider host's circuit breaker is open: take no new notifications.
        case providerCircuit
    }

    private var reasons: [KafkaTopicPartition: Set<Reason>] = [:]

    /// Adds `reason`; true when the partition must be paused now (its first reason).
    mutating func add(_ reason: Reason, _ tp: KafkaTopicPartition) -> Bool {
        let wasPaused = !(reasons[tp]?.isEmpty ?? true)
        reasons[tp, default: []].insert(reason)
        return !wasPaused
    }

    /// Removes `reason`; true when the partition must be resumed now (its last reason went).
    mutating func remove(_ reason: Reason, _ tp: KafkaTopicPartition) -> Bool {
        guard var set = reasons[tp], set.remove(reason) != nil else { return false }
        reasons[tp] = set.isEmpty ? nil : set
        return set.isEmpty
    }

    func has(_ reason: Reason, _ tp: KafkaTopicPartition) -> Bool { reasons[tp]?.contains(reason) ?? false }

    /// Partitions paused for `reason`.
    func partitions(_ reason: Reason) -> [KafkaTopicPartition] {
        reasons.filter { $0.value.contains(reason) }.map(\.key)
    }

    /// While a provider circuit is open every given partition gets the
    /// circuit reason (intake stops instead of filling the retry topics);
    /// once it closes they lose it. Returns what to pause and resume now.
    mutating func providerCircuit(open: Bool, partitions: [KafkaTopicPartition])
        -> (pause: [KafkaTopicPartition], resume: [KafkaTopicPartition])
    {
        var pause: [KafkaTopicPartition] = []
        var resume: [KafkaTopicPartition] = []
        if open {
            for tp in partitions where !has(.providerCircuit, tp) {
                if add(.providerCircuit, tp) { pause.append(tp) }
            }
        } else {
            for tp in self.partitions(.providerCircuit) where remove(.providerCircuit, tp) {
                resume.append(tp)
            }
        }
        return (pause, resume)
    }

    /// Forgets partitions no longer assigned (the consumer forgets their pause too).
    mutating func drop(_ partitions: [KafkaTopicPartition]) {
        for tp in partitions { reasons[tp] = nil }
    }

    /// Applies the in-flight bounds: a partition at `perPartition`, or every
    /// partition once the worker's total reaches `total`, gets the backpressure
    /// reason; the others lose it. Returns what to pause and resume now.
    mutating func backpressure(inFlight: [KafkaTopicPartition: Int], total: Int, perPartition: Int)
        -> (pause: [KafkaTopicPartition], resume: [KafkaTopicPartition])
    {
        let sum = inFlight.values.reduce(0, +)
        var pause: [KafkaTopicPartition] = []
        var resume: [KafkaTopicPartition] = []
        for (tp, count) in inFlight {
            if sum >= total || count >= perPartition {
                if !has(.backpressure, tp), add(.backpressure, tp) { pause.append(tp) }
            } else if has(.backpressure, tp), remove(.backpressure, tp) {
                resume.append(tp)
            }
        }
        // A partition that left the assignment without a revoke event reaching us yet.
        for tp in partitions(.backpressure) where inFlight[tp] == nil {
            if remove(.backpressure, tp) { resume.append(tp) }
        }
        return (pause, resume)
    }
}
