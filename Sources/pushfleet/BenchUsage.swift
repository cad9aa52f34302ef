import Foundation
import PushWorker

/// CPU and memory figures of this process and of child processes, read from
/// `getrusage` and `/proc` (Linux).
enum BenchUsage {
    /// The CPU the figures were taken on, as `/proc/cpuinfo` names it, and
    /// how many: per-request costs differ between machines of one kind
    /// (docs/benchmarks.md, "Machines"), so results carry it.
    static func machine() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        let lines = text.split(separator: "\n")
        let model = lines.first { $0.hasPrefix("model name") }.flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let count = lines.filter { $0.hasPrefix("processor") }.count
        return "\(model), \(count) CPUs"
    }

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
        ThreadCPU.stat(path: "/proc/\(pid)/stat")?.cpuSeconds
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
                  let times = ThreadCPU.stat(path: "/proc/\(pid)/stat") else { continue }
            if pid == postmaster {
                roles["postmaster", default: 0] += times.cpuSeconds
                roles["exited", default: 0] += times.reapedChildrenCPUSeconds
            } else {
                let title = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
                    .map { String(decoding: $0.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self) } ?? ""
                roles[postgresRole(title: title), default: 0] += times.cpuSeconds
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
