import Foundation
import PushThreads

/// A dedicated OS thread that runs blocking jobs one after another, so that blocking
/// librdkafka calls never occupy Swift's cooperative thread pool.
///
/// `@unchecked Sendable` is safe: the job queue and the stop flag are only touched
/// while holding `condition`.
final class KafkaBlockingThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false

    init(name: String) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            self.runLoop()
        }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; returns false (and does not run it) once the thread is stopping.
    @discardableResult
    func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Runs `body` on this thread and resumes with its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let queued = enqueue { continuation.resume(with: Result { try body() }) }
            if !queued { continuation.resume(throwing: KafkaError.closed()) }
        }
    }

    /// Lets queued jobs finish, then ends the thread. Does not wait (it may be called
    /// from a job on this very thread).
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
