import PushCore

/// The worker's bound on deliveries in flight: what a batch holds in memory
/// (work items, provider requests, answers, outcome rows) grows with its
/// deliveries, not its messages, and one message may fan out to 11,000 of
/// them. A batch takes permits for a part of its messages before it loads
/// their devices, builds their requests and sends, and gives them back once
/// that part's outcome is written. Waiters are served in arrival order, so
/// a large part is never starved by small ones; a part larger than the
/// whole capacity takes all of it (one message is never refused for size).
final class DeliveryPermits: Sendable {
    /// The pure bookkeeping, kept apart so it is tested without tasks.
    struct State {
        let capacity: Int
        private(set) var inUse = 0
        private var waiting: [(id: UInt64, count: Int)] = []

        init(capacity: Int) { self.capacity = max(1, capacity) }

        /// What `count` permits cost: never more than the capacity.
        func cost(_ count: Int) -> Int { min(max(0, count), capacity) }

        /// Takes `count` (as `cost` caps it) now if nobody waits ahead and they fit.
        mutating func tryTake(_ count: Int) -> Bool {
            let n = cost(count)
            guard waiting.isEmpty, inUse + n <= capacity else { return false }
            inUse += n
            return true
        }

        mutating func enqueue(id: UInt64, _ count: Int) { waiting.append((id, cost(count))) }

        /// Removes a waiter (cancelled); true if it was still waiting.
        mutating func cancel(id: UInt64) -> Bool {
            guard let i = waiting.firstIndex(where: { $0.id == id }) else { return false }
            waiting.remove(at: i)
            return true
        }

        /// Gives back `count` permits (already capped) and returns the waiters
        /// that now fit, in order; their permits are taken for them.
        mutating func release(_ count: Int) -> [UInt64] {
            inUse = max(0, inUse - count)
            return admitWaiting()
        }

        mutating func admitWaiting() -> [UInt64] {
            var admitted: [UInt64] = []
            while let head = waiting.first, inUse + head.count <= capacity {
                waiting.removeFirst()
                inUse += head.count
                admitted.append(head.id)
            }
            return admitted
        }

        var waiters: Int { waiting.count }
    }

    private let state: Locked<(permits: State, continuations: [UInt64: CheckedContinuation<Void, any Error>], nextID: UInt64)>

    init(capacity: Int) {
        state = Locked((State(capacity: capacity), [:], 0))
    }

    var capacity: Int { state.withLock { $0.permits.capacity } }
    /// The most deliveries one part of a batch takes (half the capacity, so
    /// two batches' parts can run at once).
    var partBudget: Int { max(1, capacity / 2) }
    /// Permits held now (deliveries in flight).
    var inUse: Int { state.withLock { $0.permits.inUse } }

    /// Waits for `count` permits (at most the capacity); returns how many were
    /// taken, to give back with `release`. Throws `CancellationError` if the
    /// task is cancelled while it waits (nothing is then held).
    func acquire(_ count: Int) async throws -> Int {
        let (id, cost, taken) = state.withLock { s -> (UInt64, Int, Bool) in
            if s.permits.tryTake(count) { return (0, s.permits.cost(count), true) }
            s.nextID += 1
            return (s.nextID, s.permits.cost(count), false)
        }
        if taken { return cost }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Queued and parked under one lock hold, so a release or a cancellation finds it.
                let failed = state.withLock { s -> Bool in
                    if Task.isCancelled { return true }
                    s.permits.enqueue(id: id, count)
                    let admitted = s.permits.admitWaiting()
                    s.continuations[id] = continuation
                    for other in admitted where other != id { s.continuations.removeValue(forKey: other)?.resume() }
                    if admitted.contains(id) { s.continuations.removeValue(forKey: id)?.resume() }
                    return false
                }
                if failed { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard s.permits.cancel(id: id) else { return nil }
                // The waiter behind it may fit now.
                let admitted = s.permits.admitWaiting()
                for other in admitted { s.continuations.removeValue(forKey: other)?.resume() }
                return s.continuations.removeValue(forKey: id)
            }
            continuation?.resume(throwing: CancellationError())
        }
        return cost
    }

    /// Gives back what `acquire` returned.
    func release(_ taken: Int) {
        guard taken > 0 else { return }
        let ready = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.permits.release(taken).compactMap { s.continuations.removeValue(forKey: $0) }
        }
        for continuation in ready { continuation.resume() }
    }
}
