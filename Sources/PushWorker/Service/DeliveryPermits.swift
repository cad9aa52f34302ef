import PushCore

/// The worker's bound on deliveries in flight: what a batch holds in memory
/// (work items, provider requests, answers, outcome rows) grows with its
/// deliveries, not its messages, and one message may fan out to 11,000 of
/// them. A batch takes permits for a part of its messages before it loads
/// their devices, builds their requests and sends, and gives them back once
/// that part's outcome is written. Within a lane waiters are served in
/// arrival order, so a large part is never starved by small ones; a part
/// larger than its lane may hold takes all it may (one message is never
/// refused for size).
///
/// The lanes share the capacity unequally. The interactive lane takes what
/// is free, but leaves the bulk lane its floor while bulk wants permits; the
/// bulk lane takes its floor whenever it wants it, and beyond that only what
/// leaves the interactive lane its reserve (or, when more, what interactive
/// holds and waits for). A campaign therefore never fills the bound ahead of
/// a one-time code, and never starves either.
final class DeliveryPermits: Sendable {
    /// The pure bookkeeping, kept apart so it is tested without tasks.
    struct State {
        let capacity: Int
        /// What the bulk lane may always hold when it wants permits.
        let bulkFloor: Int
        /// What the bulk lane leaves free for the interactive lane beyond its floor.
        let interactiveReserve: Int
        private(set) var held: [Lane: Int] = [:]
        private var waiting: [(id: UInt64, lane: Lane, count: Int)] = []

        init(capacity: Int, bulkFloor: Int? = nil, interactiveReserve: Int? = nil) {
            self.capacity = max(1, capacity)
            self.bulkFloor = min(self.capacity, max(1, bulkFloor ?? self.capacity / 4))
            self.interactiveReserve = min(self.capacity - self.bulkFloor, max(0, interactiveReserve ?? self.capacity / 4))
        }

        /// Permits held by both lanes.
        var inUse: Int { held.values.reduce(0, +) }

        /// The most one lane may ever hold: all of it for interactive work,
        /// all but the interactive reserve for bulk.
        func laneCapacity(_ lane: Lane) -> Int {
            lane == .interactive ? capacity : capacity - interactiveReserve
        }

        /// What `count` permits cost: never more than the lane may hold.
        func cost(_ count: Int, lane: Lane = .interactive) -> Int { min(max(0, count), laneCapacity(lane)) }

        /// Permits `lane`'s waiters ask for.
        private func waitingFor(_ lane: Lane) -> Int { waiting.lazy.filter { $0.lane == lane }.reduce(0) { $0 + $1.count } }

        /// Whether `n` more permits for `lane` fit now.
        func fits(_ n: Int, lane: Lane) -> Bool {
            let total = inUse
            guard total + n <= capacity else { return false }
            let bulk = held[.bulk, default: 0], interactive = held[.interactive, default: 0]
            switch lane {
            case .interactive:
                // The bulk lane keeps room up to its floor while it wants permits.
                let bulkWants = bulk > 0 || waitingFor(.bulk) > 0
                let kept = bulkWants ? max(0, bulkFloor - bulk) : 0
                return total + n + kept <= capacity
            case .bulk:
                if bulk + n <= bulkFloor { return true }
                let interactiveNeeds = max(interactiveReserve, interactive + waitingFor(.interactive))
                return bulk + n <= capacity - interactiveNeeds
            }
        }

        /// Takes `count` (as `cost` caps it) now if nobody of its lane waits ahead and they fit.
        mutating func tryTake(_ count: Int, lane: Lane = .interactive) -> Bool {
            let n = cost(count, lane: lane)
            guard !waiting.contains(where: { $0.lane == lane }), fits(n, lane: lane) else { return false }
            held[lane, default: 0] += n
            return true
        }

        mutating func enqueue(id: UInt64, _ count: Int, lane: Lane = .interactive) {
            waiting.append((id, lane, cost(count, lane: lane)))
        }

        /// Removes a waiter (cancelled); true if it was still waiting.
        mutating func cancel(id: UInt64) -> Bool {
            guard let i = waiting.firstIndex(where: { $0.id == id }) else { return false }
            waiting.remove(at: i)
            return true
        }

        /// Gives back `count` permits of `lane` (already capped) and returns
        /// the waiters that now fit; their permits are taken for them.
        mutating func release(_ count: Int, lane: Lane = .interactive) -> [UInt64] {
            held[lane] = max(0, held[lane, default: 0] - count)
            return admitWaiting()
        }

        /// Admits waiters that fit: the interactive lane's first, each lane's in order.
        mutating func admitWaiting() -> [UInt64] {
            var admitted: [UInt64] = []
            for lane in [Lane.interactive, .bulk] {
                while let i = waiting.firstIndex(where: { $0.lane == lane }), fits(waiting[i].count, lane: lane) {
                    let head = waiting.remove(at: i)
                    held[lane, default: 0] += head.count
                    admitted.append(head.id)
                }
            }
            return admitted
        }

        var waiters: Int { waiting.count }
    }

    private let state: Locked<(permits: State, continuations: [UInt64: CheckedContinuation<Void, any Error>], nextID: UInt64)>

    init(capacity: Int, bulkFloor: Int? = nil, interactiveReserve: Int? = nil) {
        state = Locked((State(capacity: capacity, bulkFloor: bulkFloor, interactiveReserve: interactiveReserve), [:], 0))
    }

    var capacity: Int { state.withLock { $0.permits.capacity } }
    /// The most deliveries one part of a batch of `lane` takes: half the
    /// capacity for interactive work (two batches' parts can run at once),
    /// the floor for bulk (a campaign's part goes within its floor, whatever
    /// interactive work holds).
    func partBudget(for lane: Lane = .interactive) -> Int {
        state.withLock { lane == .interactive ? max(1, $0.permits.capacity / 2) : $0.permits.bulkFloor }
    }
    /// Permits held now (deliveries in flight).
    var inUse: Int { state.withLock { $0.permits.inUse } }
    /// Permits `lane` holds now.
    func inUse(_ lane: Lane) -> Int { state.withLock { $0.permits.held[lane, default: 0] } }

    /// Waits for `count` permits (at most the capacity); returns how many were
    /// taken, to give back with `release`. Throws `CancellationError` if the
    /// task is cancelled while it waits (nothing is then held).
    func acquire(_ count: Int, lane: Lane = .interactive) async throws -> Int {
        let (id, cost, taken) = state.withLock { s -> (UInt64, Int, Bool) in
            if s.permits.tryTake(count, lane: lane) { return (0, s.permits.cost(count, lane: lane), true) }
            s.nextID += 1
            return (s.nextID, s.permits.cost(count, lane: lane), false)
        }
        if taken { return cost }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Queued and parked under one lock hold, so a release or a cancellation finds it.
                let failed = state.withLock { s -> Bool in
                    if Task.isCancelled { return true }
                    s.permits.enqueue(id: id, count, lane: lane)
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

    /// Gives back what `acquire` returned for `lane`.
    func release(_ taken: Int, lane: Lane = .interactive) {
        guard taken > 0 else { return }
        let ready = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.permits.release(taken, lane: lane).compactMap { s.continuations.removeValue(forKey: $0) }
        }
        for continuation in ready { continuation.resume() }
    }
}
