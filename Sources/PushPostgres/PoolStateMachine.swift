/// The pool's bookkeeping as a pure state machine: which connections are
/// idle, how many more may be opened, who waits (the highest priority
/// first, each priority in arrival order: a campaign's batches, run at a
/// lower task priority, queue behind a one-time code's, never in front of
/// it). The pool performs the returned actions (resume a waiter, open or
/// close a connection).
struct PoolStateMachine<Connection> {
    /// What a caller gets: an idle connection, or the right to open a new one.
    enum Lease {
        case existing(Connection)
        case openNew
    }

    enum CheckoutAction {
        case lease(Lease)
        /// Park the caller until `release` or `close` hands it a lease.
        case wait
        case failClosed
    }

    struct ReleaseAction {
        /// Hand this lease to the waiter with this id.
        var resume: (id: Int, lease: Lease)?
        /// The pool is closed: close the returned connection.
        var close: Connection?
    }

    private var idle: [Connection] = []
    /// Connections that may still be opened (size minus idle minus leased).
    private var openSlots: Int
    private var waiters: [(id: Int, priority: UInt8)] = []
    private(set) var isClosed = false

    init(size: Int) {
        self.openSlots = max(1, size)
    }

    var idleCount: Int { idle.count }
    var waiterCount: Int { waiters.count }

    /// Idle connections are reused oldest-returned-last (LIFO keeps few hot);
    /// otherwise a free slot becomes a new connection; otherwise wait in line.
    mutating func checkout(waiterID: Int, priority: UInt8 = 0) -> CheckoutAction {
        if isClosed { return .failClosed }
        if let connection = idle.popLast() { return .lease(.existing(connection)) }
        if openSlots > 0 {
            openSlots -= 1
            return .lease(.openNew)
        }
        waiters.append((waiterID, priority))
        return .wait
    }

    /// A caller gives back its lease: a healthy connection, or nil when the
    /// connection was broken or never opened (the slot becomes free again).
    mutating func release(_ connection: Connection?) -> ReleaseAction {
        let lease: Lease = connection.map { .existing($0) } ?? .openNew
        if isClosed {
            return ReleaseAction(resume: nil, close: connection)
        }
        if let top = waiters.lazy.map(\.priority).max(), let next = waiters.firstIndex(where: { $0.priority == top }) {
            return ReleaseAction(resume: (waiters.remove(at: next).id, lease), close: nil)
        }
        if let connection {
            idle.append(connection)
        } else {
            openSlots += 1
        }
        return ReleaseAction(resume: nil, close: nil)
    }

    /// A waiting caller gave up (task cancelled). True if it was still waiting;
    /// false if a lease was already handed to it (it must release it).
    mutating func cancelWaiter(id: Int) -> Bool {
        guard let position = waiters.firstIndex(where: { $0.id == id }) else { return false }
        waiters.remove(at: position)
        return true
    }

    /// Closes the pool: returns the waiters to fail and the idle connections to close.
    mutating func close() -> (waiters: [Int], idle: [Connection]) {
        isClosed = true
        defer {
            waiters = []
            idle = []
        }
        return (waiters.map(\.id), idle)
    }
}

extension PoolStateMachine.Lease: Sendable where Connection: Sendable {}
extension PoolStateMachine.ReleaseAction: Sendable where Connection: Sendable {}
