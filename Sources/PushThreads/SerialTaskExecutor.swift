import Foundation
import PushCore

/// A task executor with one thread of its own, for the short jobs of many
/// concurrent sends: building a request, awaiting its answer, judging it.
///
/// On the global pool each answer the curl thread hands back is a libdispatch
/// work item that may wake a pool thread (a burst of answers can wake several),
/// and every child task's end resumes its batch on the pool again: 0.43
/// `futex` calls a request on the pool threads of `bench send`
/// (docs/benchmarks.md). Tasks that prefer this executor
/// (`withTaskExecutorPreference`, inherited by child tasks) run their jobs
/// here instead: an enqueue appends under a lock and signals only when the
/// thread sleeps, and the thread runs whatever has queued up, in order,
/// before it sleeps again. A job that blocks holds up the others queued
/// here, so only non-blocking send-path code should prefer it.
public final class SerialTaskExecutor: TaskExecutor, @unchecked Sendable {
    // Safe: `queue`, `sleeping`, `holds` and `wakeOwed` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var sleeping = false
    /// `holdingWakes` calls running: enqueues then leave the thread asleep.
    private var holds = 0
    /// A job arrived while the thread slept and a hold was on: wake it when the last hold ends.
    private var wakeOwed = false

    /// The process's send executor (its thread starts on first use and lives as long as the process).
    public static let sends = SerialTaskExecutor(name: "send.executor")

    /// Every executor made so far (each lives as long as the process: its thread never ends).
    private static let all = Locked<[SerialTaskExecutor]>([])

    public init(name: String) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            run()
        }
        thread.name = name
        thread.start()
        Self.all.withLock { $0.append(self) }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        queue.append(unowned)
        var wake = false
        if sleeping {
            if holds > 0 {
                wakeOwed = true
            } else {
                wake = true
                sleeping = false
            }
        }
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Runs `body`, and wakes each executor's thread (if it sleeps) once at the
    /// end for every job enqueued on it meanwhile, rather than at the first of
    /// them. The curl thread resumes all the answers of one loop turn inside
    /// this: woken at the first, the send executor would run it and sleep again
    /// before the next arrived, one sleep and wake-up per answer instead of one
    /// per turn. It holds whatever executors exist, so the caller need not know
    /// where its continuations resume, and it makes none.
    public static func holdingWakes<R>(_ body: () throws -> R) rethrows -> R {
        let executors = all.withLock { $0 }
        for executor in executors { executor.hold() }
        defer { for executor in executors { executor.release() } }
        return try body()
    }

    private func hold() {
        condition.lock()
        holds += 1
        condition.unlock()
    }

    private func release() {
        condition.lock()
        holds -= 1
        var wake = false
        if holds == 0, wakeOwed {
            wakeOwed = false
            if sleeping {
                wake = true
                sleeping = false
            }
        }
        condition.unlock()
        if wake { condition.signal() }
    }

    private func run() {
        var batch: [UnownedJob] = []
        batch.reserveCapacity(256)
        while true {
            condition.lock()
            while queue.isEmpty {
                sleeping = true
                condition.wait()
            }
            sleeping = false
            swap(&batch, &queue)
            condition.unlock()
            let executor = asUnownedTaskExecutor()
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

extension TaskGroup {
    /// Adds a child that keeps the group's task executor preference or, when
    /// `spread` is true, one that runs on the global pool (CPU work that should
    /// use every core). Not `addTask(executorPreference: spread ? global : nil)`:
    /// with Swift 6.3.1 an explicit `nil` inherits the preference in an
    /// unoptimised build but drops it when compiled with `-O` (a 25-line program
    /// shows both), which would put the release worker's sends on the global pool.
    public mutating func addTask(spreadingToGlobalPool spread: Bool,
                                 operation: sending @escaping @isolated(any) () async -> ChildTaskResult) {
        if spread {
            addTask(executorPreference: globalConcurrentExecutor, operation: operation)
        } else {
            addTask(operation: operation)
        }
    }
}
