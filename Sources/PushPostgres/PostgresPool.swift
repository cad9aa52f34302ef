import Foundation
import Logging

/// A small fixed-size pool of `PostgresConnection`s.
///
/// Connections open lazily, up to `size`. A connection found broken (killed
/// backend, server restart, a command that left a transaction open) is closed
/// and replaced on the next checkout, reconnecting with exponential backoff.
/// Callers beyond `size` wait, those of the highest task priority first
/// (`Task.basePriority`), each priority in FIFO order.
///
/// `@unchecked Sendable`: `state`, `waiting` and `nextWaiterID` are only touched while
/// holding `lock`; everything else is immutable.
public final class PostgresPool: @unchecked Sendable {
    typealias Lease = PoolStateMachine<PostgresConnection>.Lease

    /// Maximum number of open connections.
    public let size: Int
    private let url: String
    private let logger: Logger
    private let connectAttempts: Int
    private let lock = NSLock()
    private var state: PoolStateMachine<PostgresConnection>
    private var waiting: [Int: CheckedContinuation<Lease, Error>] = [:]
    private var nextWaiterID = 0

    /// - Parameters:
    ///   - url: libpq URL or connection string, e.g. `postgresql://user@host:5432/db`.
    ///   - size: maximum number of connections (at least 1).
    ///   - connectAttempts: tries per (re)connect before the checkout fails.
    public init(url: String, size: Int, logger: Logger, connectAttempts: Int = 5) {
        self.url = url
        self.size = max(1, size)
        self.logger = logger
        self.connectAttempts = max(1, connectAttempts)
        self.state = PoolStateMachine(size: size)
    }

    /// Callers waiting for a connection now.
    public var waitingCount: Int { lock.withLock { waiting.count } }

    /// Runs `body` with a connection of its own; the connection returns to the
    /// pool afterwards (or is dropped if `body` left it broken or inside a
    /// transaction). Throws `PostgresError` (retriable) if no connection can
    /// be opened, or `CancellationError` if the task is cancelled while waiting.
    public func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await checkout()
        let value: T
        do {
            value = try await body(connection)
        } catch {
            giveBack(connection)
            throw error
        }
        giveBack(connection)
        return value
    }

    /// Fails waiting callers, closes idle connections and refuses new
    /// checkouts. Connections in use close when their callers return them.
    public func close() async {
        let (waiters, idle) = lock.withLock {
            let closed = state.close()
            let continuations = closed.waiters.compactMap { waiting.removeValue(forKey: $0) }
            return (continuations, closed.idle)
        }
        for continuation in waiters {
            continuation.resume(throwing: PostgresError.closed("connection pool closed"))
        }
        for connection in idle { connection.close() }
        logger.debug("postgres pool closed")
    }

    private func checkout() async throws -> PostgresConnection {
        var lease = try await acquireLease()
        while true {
            switch lease {
            case .existing(let connection):
                if await connection.checkAlive() { return connection }
                logger.info("postgres connection broken, replacing it",
                            metadata: ["postgres.connection_id": "\(connection.id)"])
                connection.close()
                lease = .openNew
            case .openNew:
                do {
                    return try await connectWithBackoff()
                } catch {
                    giveBackSlot()
                    throw error
                }
            }
        }
    }

    private func acquireLease() async throws -> Lease {
        // The priority the task was started with: one awaited by a higher-priority
        // task runs escalated, and would then pass everyone.
        let priority = (Task.basePriority ?? .medium).rawValue
        let id = lock.withLock {
            nextWaiterID += 1
            return nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, Error>) in
                // Checkout and parking happen under one lock hold, so a release
                // or a cancellation always finds the continuation.
                let immediate: Result<Lease, Error>? = lock.withLock {
                    if Task.isCancelled { return .failure(CancellationError()) }
                    switch state.checkout(waiterID: id, priority: priority) {
                    case .lease(let lease):
                        return .success(lease)
                    case .failClosed:
                        return .failure(PostgresError.closed("connection pool closed"))
                    case .wait:
                        waiting[id] = continuation
                        return nil
                    }
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let continuation = lock.withLock {
                state.cancelWaiter(id: id) ? waiting.removeValue(forKey: id) : nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Returns a connection: reused if healthy and idle-in-no-transaction, else closed.
    private func giveBack(_ connection: PostgresConnection) {
        if connection.isBroken || connection.isInTransaction {
            logger.debug("postgres connection dropped on return",
                         metadata: ["postgres.connection_id": "\(connection.id)",
                                    "postgres.in_transaction": "\(connection.isInTransaction)"])
            connection.close()
            release(nil)
        } else {
            release(connection)
        }
    }

    /// Returns the right to open a connection (after a failed connect).
    private func giveBackSlot() {
        release(nil)
    }

    private func release(_ connection: PostgresConnection?) {
        let (action, continuation) = lock.withLock {
            let action = state.release(connection)
            let continuation = action.resume.flatMap { waiting.removeValue(forKey: $0.id) }
            return (action, continuation)
        }
        if let resume = action.resume, let continuation {
            continuation.resume(returning: resume.lease)
        }
        action.close?.close()
    }

    /// Opens a connection, retrying retriable failures with exponential
    /// backoff (100 ms doubling, capped at 2 s).
    private func connectWithBackoff() async throws -> PostgresConnection {
        var delay: UInt64 = 100_000_000
        var attempt = 1
        while true {
            do {
                return try await PostgresConnection.connect(url: url, logger: logger)
            } catch let error as PostgresError where error.isRetriable && attempt < connectAttempts {
                logger.warning("postgres connect failed, retrying", metadata: [
                    "postgres.attempt": "\(attempt)", "postgres.error": "\(error.message)",
                ])
                try await Task.sleep(nanoseconds: delay)
                delay = min(delay * 2, 2_000_000_000)
                attempt += 1
            }
        }
    }
}
