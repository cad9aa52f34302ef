import Foundation

/// A process's CPU time from Linux's `/proc`, thread by thread, with the role
/// each thread's kernel name tells (our threads name themselves:
/// `ThreadName`). What `/metrics` exports as
/// `pushfleet_thread_cpu_seconds_total` and the benchmarks print per
/// notification. Elsewhere than Linux every reading is empty.
public enum ThreadCPU {
    /// The roles `role(threadName:processName:)` gives, and `exited`: threads
    /// that ended (their time, counted from the process's total).
    public static let roles = ["curl", "sends", "tasks", "postgres_client", "kafka_threads", "librdkafka", "nio", "main", "other", "exited"]

    /// One `stat` file of `/proc` (a process's or a thread's).
    public struct Stat: Sendable, Equatable {
        /// The kernel name (`comm`, between the parentheses).
        public var name: String
        /// User + system CPU seconds (fields 14 and 15).
        public var cpuSeconds: Double
        /// Those of the children it has waited for (fields 16 and 17).
        public var reapedChildrenCPUSeconds: Double
    }

    /// One reading of a process: its total and each live thread's.
    public struct Sample: Sendable {
        public var processName: String
        public var processCPUSeconds: Double
        /// Thread id → kernel name and CPU seconds.
        public var threads: [Int32: (name: String, cpuSeconds: Double)]

        /// The time of threads that have ended: the process's total less its live threads'.
        public var exitedCPUSeconds: Double {
            max(0, processCPUSeconds - threads.values.reduce(0) { $0 + $1.cpuSeconds })
        }

        /// CPU seconds by role, `exited` included; they add up to the process's total.
        public var byRole: [String: Double] {
            var roles: [String: Double] = [:]
            for thread in threads.values {
                roles[ThreadCPU.role(threadName: thread.name, processName: processName), default: 0] += thread.cpuSeconds
            }
            roles["exited"] = exitedCPUSeconds
            return roles
        }
    }

    /// Parses a `/proc/…/stat` file; nil when it cannot be read (a thread
    /// that just ended) or does not have the fields.
    public static func stat(path: String) -> Stat? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return parseStat(text)
    }

    /// `stat(path:)`'s parsing. The name may hold spaces and parentheses, so
    /// it is what lies between the first `(` and the last `)`.
    public static func parseStat(_ text: String) -> Stat? {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        // After "pid (comm)" the fields start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let utime = Double(fields[11]), let stime = Double(fields[12]),
              let cutime = Double(fields[13]), let cstime = Double(fields[14]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let hz = ticks > 0 ? ticks : 100
        return Stat(name: String(text[text.index(after: open)..<close]), cpuSeconds: (utime + stime) / hz,
                    reapedChildrenCPUSeconds: (cutime + cstime) / hz)
    }

    /// Reads `pid`'s total and every live thread (`pid` nil: this process).
    public static func sample(pid: Int32? = nil) -> Sample? {
        let base = "/proc/\(pid.map(String.init) ?? "self")"
        guard let process = stat(path: base + "/stat"),
              let tids = try? FileManager.default.contentsOfDirectory(atPath: base + "/task") else { return nil }
        var threads: [Int32: (name: String, cpuSeconds: Double)] = [:]
        for entry in tids {
            guard let tid = Int32(entry), let thread = stat(path: "\(base)/task/\(entry)/stat") else { continue }
            threads[tid] = (thread.name, thread.cpuSeconds)
        }
        return Sample(processName: process.name, processCPUSeconds: process.cpuSeconds, threads: threads)
    }

    /// The role of a thread by its kernel name: `curl` (a multi handle's
    /// loop, `curl.multi`), `sends` (the send executor, `send.executor`:
    /// building requests, awaiting and judging the answers), `postgres_client` (a connection's libpq thread,
    /// `pg.N`), `kafka_threads` (our blocking calls into librdkafka,
    /// `kafka.…`), `librdkafka` (its own `rdk:` threads), `nio` (the metrics
    /// and health listener), `main` (the main thread, and threads it started
    /// without a name), and `tasks`: Swift concurrency's pool, which runs on
    /// dispatch's threads (`com.apple.root.default-qos`, of which the kernel
    /// keeps the last 15 bytes), where decoding, batching and the ledger's
    /// encoding run. Anything else is `other`.
    public static func role(threadName name: String, processName: String) -> String {
        if name.hasPrefix("curl.") { return "curl" }
        if name.hasPrefix("send.") { return "sends" }
        if name.hasPrefix("pg.") { return "postgres_client" }
        if name.hasPrefix("kafka.") { return "kafka_threads" }
        if name.hasPrefix("rdk:") { return "librdkafka" }
        if name.hasPrefix("NIO-") { return "nio" }
        if name.hasSuffix("-qos") || name.hasSuffix("overcommit") || name.hasPrefix("com.apple") { return "tasks" }
        if name == processName { return "main" }
        return "other"
    }

    /// Resident memory in bytes (`VmRSS` of `/proc/<pid>/status`; nil: this process).
    public static func residentBytes(pid: Int32? = nil) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }
}
