import Foundation

/// CPU and memory figures of this process and of child processes, read from
/// `getrusage` and `/proc` (Linux).
enum BenchUsage {
    /// User + system CPU seconds of this process so far (every thread).
    static func selfCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        return seconds(usage)
    }

    /// User + system CPU seconds of the children that have been waited for.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return 0 }
        return seconds(usage)
    }

    private static func seconds(_ usage: rusage) -> Double {
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// User + system CPU seconds of a running process (`/proc/PID/stat`
    /// fields 14 and 15), or nil when it is gone.
    static func processCPUSeconds(pid: Int32) -> Double? {
        cpuTimes(pid: pid)?.own
    }

    /// A process's own CPU seconds (fields 14 and 15 of `/proc/PID/stat`) and
    /// those of the children it has waited for (fields 16 and 17).
    private static func cpuTimes(pid: Int32) -> (own: Double, reapedChildren: Double)? {
        stat(path: "/proc/\(pid)/stat").map { ($0.own, $0.reapedChildren) }
    }

    /// A `stat` file of `/proc` (a process's or a thread's): its name (the
    /// `comm` in parentheses), own CPU seconds (fields 14 and 15) and its
    /// reaped children's (16 and 17).
    private static func stat(path: String) -> (name: String, own: Double, reapedChildren: Double)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        // After "pid (comm)" the fields start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let utime = Double(fields[11]), let stime = Double(fields[12]),
              let cutime = Double(fields[13]), let cstime = Double(fields[14]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let hz = ticks > 0 ? ticks : 100
        return (String(text[text.index(after: open)..<close]), (utime + stime) / hz, (cutime + cstime) / hz)
    }

    /// CPU seconds of `pid`'s threads by role, from each live thread's
    /// `/proc/PID/task/TID/stat` and the kernel name our threads give
    /// themselves (`ThreadName`); `exited` is the process's total less its
    /// live threads' (threads that ran and ended). `pid` nil means this process.
    static func threadCPUSecondsByRole(pid: Int32? = nil) -> [String: Double] {
        let base = "/proc/\(pid.map(String.init) ?? "self")"
        guard let process = stat(path: base + "/stat"),
              let tids = try? FileManager.default.contentsOfDirectory(atPath: base + "/task") else { return [:] }
        var roles: [String: Double] = [:]
        var live = 0.0
        for tid in tids {
            guard let thread = stat(path: "\(base)/task/\(tid)/stat") else { continue }
            roles[threadRole(name: thread.name, processName: process.name), default: 0] += thread.own
            live += thread.own
        }
        roles["exited"] = max(0, process.own - live)
        return roles
    }

    /// The role of a thread of ours by its kernel name: `curl` (a multi
    /// handle's loop), `floor` (bench send's libcurl floor), `postgres_client`
    /// (a connection's libpq thread), `kafka_threads` (our blocking calls into
    /// librdkafka), `librdkafka` (its own `rdk:` threads), `nio` (the metrics
    /// server), `main`, and `tasks`: Swift concurrency's pool, which runs on
    /// dispatch's threads (`com.apple.root.default-qos`, cut to its last 15
    /// bytes), where decoding, batching and the outcome writes' encoding run.
    static func threadRole(name: String, processName: String) -> String {
        if name.hasPrefix("curl.") { return "curl" }
        if name == "floor" { return "floor" }
        if name.hasPrefix("pg.") { return "postgres_client" }
        if name.hasPrefix("kafka.") { return "kafka_threads" }
        if name.hasPrefix("rdk:") { return "librdkafka" }
        if name.hasPrefix("NIO-") { return "nio" }
        if name.hasSuffix("-qos") || name.hasSuffix("overcommit") || name.hasPrefix("com.apple") { return "tasks" }
        if name == processName { return "main" }
        return "other"
    }

    /// CPU seconds of the PostgreSQL server whose postmaster is `postmaster`
    /// (it and its children: another cluster on the machine, or a previous
    /// one's leftovers, would be sampled at one end only), by role read from
    /// each process's title (`postgres: walwriter`, `postgres: autovacuum
    /// worker …`, a client backend's `postgres: USER DB HOST …`). The
    /// children the postmaster has reaped are `exited` (autovacuum workers,
    /// closed backends), so the difference of two samples also counts a
    /// process that ran and exited in between.
    static func postgresCPUSecondsByRole(postmaster: Int32) -> [String: Double] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var roles: [String: Double] = [:]
        for entry in entries {
            guard let pid = Int32(entry), pid == postmaster || parentPID(of: pid) == postmaster,
                  let times = cpuTimes(pid: pid) else { continue }
            if pid == postmaster {
                roles["postmaster", default: 0] += times.own
                roles["exited", default: 0] += times.reapedChildren
            } else {
                let title = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
                    .map { String(decoding: $0.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self) } ?? ""
                roles[postgresRole(title: title), default: 0] += times.own
            }
        }
        return roles
    }

    /// The parent process id (`PPid:` of `/proc/<pid>/status`).
    static func parentPID(of pid: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("PPid:") {
            return Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The role a PostgreSQL process title names: a background process by
    /// name, or `backends` (a child not yet titled is counted as one).
    static func postgresRole(title: String) -> String {
        guard let range = title.range(of: "postgres: ") else { return "backends" }
        let rest = title[range.upperBound...]
        for role in ["walwriter", "checkpointer", "background writer", "autovacuum", "logical replication",
                     "stats collector", "archiver", "walsender", "walreceiver", "io worker"] where rest.hasPrefix(role) {
            return role
        }
        return "backends"
    }

    /// `after - before`, per role present in either.
    static func difference(_ after: [String: Double], _ before: [String: Double]) -> [String: Double] {
        var out = after
        for (role, seconds) in before { out[role, default: 0] -= seconds }
        return out
    }

    /// Peak resident set size in bytes (`VmHWM` of `/proc/<pid>/status`);
    /// `pid` nil means this process.
    static func peakRSSBytes(pid: Int32? = nil) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
