import CCurl
import CShims
import Foundation
import Logging
import PushThreads

/// The curl multi handle and the dedicated thread that drives it.
///
/// Callers hand transfers over through a lock-protected queue and wake the
/// thread with `curl_multi_wakeup` only when the queue goes from taken to
/// non-empty (one wake-up per batch, not per request: the call is a write(2)
/// and the loop's poll returning early); the thread adds them to the multi handle,
/// runs `curl_multi_perform`, collects finished transfers and resumes their
/// continuations outside the lock. curl's blocking `curl_multi_poll` never runs
/// on Swift's cooperative pool.
final class CurlEngine: @unchecked Sendable {
    // @unchecked Sendable: the fields under "lock" are only touched with `lock`
    // held; the fields under "loop thread" only from the loop thread; `multi`
    // is only used from the loop thread apart from the thread-safe wakeup.
    let configuration: HTTPClientConfiguration
    let logger: Logger
    let multi: CurlMultiHandle

    // lock
    private let lock = NSLock()
    private var pending: [Transfer] = []
    private var cancellations: [Transfer] = []
    private var shuttingDown = false
    private var wakeups = WakeupGate()
    private var counters = HTTPClientStats(submitted: 0, succeeded: 0, failed: 0, connectionsOpened: 0)

    // loop thread
    var active: [UnsafeMutableRawPointer: Transfer] = [:]
    var freeHandles: [CurlEasyHandle] = []
    var admission: HostAdmission
    static let maxFreeHandles = 512

    private let exited = DispatchGroup()
    /// The loop thread's id, so `shutdown()` from inside it does not wait on itself.
    private var loopThread: pthread_t?

    init(configuration: HTTPClientConfiguration, logger: Logger) throws(HTTPError) {
        try CurlGlobal.ensureInitialised()
        self.configuration = configuration
        self.logger = logger
        self.multi = try CurlMultiHandle(configuration: configuration)
        self.admission = HostAdmission(limit: HostAdmission.limit(for: configuration))
    }

    /// Starts the loop thread; call once.
    func start() {
        exited.enter()
        // The thread holds the engine until the loop returns, then lets go.
        let thread = Thread { [self] in
            ThreadName.setCurrent("curl.multi")
            lock.lock()
            loopThread = pthread_self()
            lock.unlock()
            runLoop()
            exited.leave()
        }
        thread.name = "curl.multi"
        thread.start()
    }

    /// Queues `transfer`, or fails it at once if the engine is shutting down
    /// or its task was already cancelled.
    func submit(_ transfer: Transfer) {
        lock.lock()
        if shuttingDown || transfer.cancelRequested {
            let error = shuttingDown ? HTTPError.shutdown() : HTTPError.cancelled()
            transfer.phase = .done
            counters.failed += shuttingDown ? 1 : 0
            lock.unlock()
            transfer.resume(with: .failure(error))
            return
        }
        transfer.phase = .queued
        counters.submitted += 1
        pending.append(transfer)
        let wake = needsWakeupLocked()
        lock.unlock()
        if wake { multi.wakeup() }
    }

    /// The calling task was cancelled: fail the transfer wherever it is.
    func cancel(_ transfer: Transfer) {
        lock.lock()
        switch transfer.phase {
        case .new:
            transfer.cancelRequested = true
            lock.unlock()
        case .queued:
            pending.removeAll { $0 === transfer }
            transfer.phase = .done
            counters.failed += 1
            lock.unlock()
            transfer.resume(with: .failure(.cancelled()))
        case .active:
            cancellations.append(transfer)
            let wake = needsWakeupLocked()
            lock.unlock()
            if wake { multi.wakeup() }
        case .done:
            lock.unlock()
        }
    }

    /// Fails everything pending and in flight and joins the loop thread.
    func shutdown() {
        lock.lock()
        shuttingDown = true
        let onLoopThread = loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        lock.unlock()
        multi.wakeup()
        if !onLoopThread { exited.wait() }
    }

    private func needsWakeupLocked() -> Bool { wakeups.queued() }

    /// How many `curl_multi_wakeup` calls submissions and cancellations made.
    var wakeupCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return wakeups.sent
    }

    /// The multi handle's tracked sockets; read after the loop thread stopped
    /// or for a test's rough check (it is loop-thread state).
    var trackedSocketCount: Int { multi.sockets.sockets.count }

    func stats() -> HTTPClientStats {
        lock.lock()
        defer { lock.unlock() }
        return counters
    }

    /// Takes the queued work; `nil` once shutdown was requested.
    func takeWork() -> (new: [Transfer], cancelled: [Transfer])? {
        lock.lock()
        defer { lock.unlock() }
        // At shutdown leave the queue to `drainAtShutdown`.
        if shuttingDown { return nil }
        wakeups.taken()
        let work = (new: pending, cancelled: cancellations)
        pending.removeAll()
        cancellations.removeAll()
        for transfer in work.new { transfer.phase = .active }
        return work
    }

    /// Records the outcome in the counters (under the lock) and marks it done.
    func record(_ transfer: Transfer, _ result: Result<HTTPResponse, HTTPError>, newConnections: Int) {
        lock.lock()
        transfer.phase = .done
        switch result {
        case .success: counters.succeeded += 1
        case .failure: counters.failed += 1
        }
        counters.connectionsOpened += newConnections
        lock.unlock()
    }

    /// What remains in the queue at shutdown.
    func drainAtShutdown() -> [Transfer] {
        lock.lock()
        defer { lock.unlock() }
        let rest = pending
        pending.removeAll()
        cancellations.removeAll()
        return rest
    }
}
