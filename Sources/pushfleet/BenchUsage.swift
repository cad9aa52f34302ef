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
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" the fields start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (utime + stime) / (ticks > 0 ? ticks : 100)
    }

    /// CPU seconds of every running process whose command name is `name`
    /// (e.g. the PostgreSQL server and its backends: `postgres`). Processes
    /// that exited in between are not counted.
    static func processesCPUSeconds(named name: String) -> Double {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        var total = 0.0
        for entry in entries {
            guard let pid = Int32(entry),
                  let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name else { continue }
            total += processCPUSeconds(pid: pid) ?? 0
        }
        return total
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
