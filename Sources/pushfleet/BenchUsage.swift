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
    /// fields 14 and 15), or nil when it is gone. With `reapedChildren`, also
    /// the children it has waited for (fields 16 and 17).
    static func processCPUSeconds(pid: Int32, reapedChildren: Bool = false) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" the fields start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let utime = Double(fields[11]), let stime = Double(fields[12]),
              let cutime = Double(fields[13]), let cstime = Double(fields[14]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (utime + stime + (reapedChildren ? cutime + cstime : 0)) / (ticks > 0 ? ticks : 100)
    }

    /// CPU seconds of a PostgreSQL server's processes by role, read from
    /// `/proc`: each process's role is its title (`postgres: walwriter`,
    /// `postgres: autovacuum worker …`, a client backend's `postgres: USER DB
    /// HOST …`). The postmaster's own line adds the children it has reaped
    /// (`exited`: autovacuum workers, closed backends), so the difference of
    /// two samples counts a process that ran and exited in between, which
    /// summing live processes would miss.
    /// Only the server whose postmaster is `postmaster` counts (another
    /// cluster on the machine, or the previous run's still shutting down,
    /// would otherwise be sampled at one end only).
    static func postgresCPUSecondsByRole(postmaster: Int32) -> [String: Double] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var roles: [String: Double] = [:]
        for entry in entries {
            guard let pid = Int32(entry), pid == postmaster || parentPID(of: pid) == postmaster,
                  let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == "postgres",
                  let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let title = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            let role = pid == postmaster ? "postmaster" : postgresRole(title: title)
            if role == "postmaster" {
                roles["postmaster", default: 0] += processCPUSeconds(pid: pid) ?? 0
                let all = processCPUSeconds(pid: pid, reapedChildren: true) ?? 0
                roles["exited", default: 0] += all - (processCPUSeconds(pid: pid) ?? 0)
            } else {
                roles[role, default: 0] += processCPUSeconds(pid: pid) ?? 0
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
