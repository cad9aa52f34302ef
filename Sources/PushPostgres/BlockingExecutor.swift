import Foundation
import PushThreads

/// One dedicated OS thread that runs blocking jobs (libpq calls) one at a time,
/// in submission order, so they never occupy Swift's cooperative thread pool.
///
/// `@unchecked Sendable`: all mutable state (`jobs`, `stopping`) is only
/// touched while holding `condition`'s lock.
final class BlockingExecutor: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var stopping = false

    init(name: String) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            self.runLoop()
        }
        thread.name = name
        thread.start()
    }

    /// Runs `body` on the executor's thread and returns its result.
    /// Throws `PostgresError.closed` if the executor was shut down.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let accepted = enqueue {
                continuation.resume(with: Result { try body() })
            }
            if !accepted {
                continuation.resume(throwing: PostgresError.closed("connection is closed"))
            }
        }
    }

    /// Queues a job without waiting for it. Returns false after `shutdown()`.
    @discardableResult
    func enqueue(_ job: @escaping () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Lets already queued jobs finish, then ends the thread. Later submissions fail.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping {
                condition.wait()
            }
            if jobs.isEmpty {  // stopping and drained
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job() }
        }
    }
}
