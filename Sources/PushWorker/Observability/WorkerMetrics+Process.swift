import CoreMetrics
import Foundation
import PushCore

extension WorkerMetrics {
    /// What `exportProcess` last brought the counters up to.
    struct ProcessBaseline: Sendable {
        var processCPUSeconds = 0.0
        var exitedCPUSeconds = 0.0
        /// Thread id → role and CPU seconds at the last reading.
        var threads: [Int32: (role: String, cpuSeconds: Double)] = [:]
    }

    /// Brings the process metrics up to `/proc`'s values: the standard
    /// `process_cpu_seconds_total` and `process_resident_memory_bytes`, and
    /// `pushfleet_thread_cpu_seconds_total{thread}` by `ThreadCPU` role, so
    /// an operator sees which part of a worker is busy (`curl`: the provider
    /// connections; `tasks`: decoding, batching, the ledger's encoding;
    /// `postgres_client`, `kafka_threads`, `librdkafka`, …) and CPU per
    /// notification from Prometheus alone. Call it before each scrape.
    ///
    /// Counted thread by thread, so the roles add up to the process's total
    /// and none ever goes down: a thread that ended is counted under its
    /// role up to the last reading, and under `exited` for what it used after.
    public func exportProcess(_ reading: ThreadCPU.Sample? = ThreadCPU.sample(), residentBytes: Int? = ThreadCPU.residentBytes()) {
        if let residentBytes { gauge(MetricNames.processResidentMemory).record(residentBytes) }
        guard let reading else { return }
        processBaseline.withLock { last in
            var byRole: [String: Double] = [:]
            var threads: [Int32: (role: String, cpuSeconds: Double)] = [:]
            for (tid, thread) in reading.threads {
                let role = ThreadCPU.role(threadName: thread.name, processName: reading.processName)
                threads[tid] = (role, thread.cpuSeconds)
                // A thread id seen before under another role, or with less time, is a new thread.
                let before = last.threads[tid].flatMap { $0.role == role && $0.cpuSeconds <= thread.cpuSeconds ? $0.cpuSeconds : nil } ?? 0
                byRole[role, default: 0] += thread.cpuSeconds - before
            }
            // Threads gone since the last reading: what they used after it is the growth of
            // the process's ended-thread time less what had already been counted for them.
            let counted = last.threads.filter { threads[$0.key] == nil }.values.reduce(0) { $0 + $1.cpuSeconds }
            byRole["exited", default: 0] += reading.exitedCPUSeconds - last.exitedCPUSeconds - counted
            for (role, seconds) in byRole where seconds > 0 {
                floatingCounter(MetricNames.threadCPU, [("thread", role)]).increment(by: seconds)
            }
            let processDelta = reading.processCPUSeconds - last.processCPUSeconds
            if processDelta > 0 { floatingCounter(MetricNames.processCPU).increment(by: processDelta) }
            last.processCPUSeconds = max(last.processCPUSeconds, reading.processCPUSeconds)
            last.exitedCPUSeconds = max(last.exitedCPUSeconds, reading.exitedCPUSeconds)
            last.threads = threads
        }
    }
}
