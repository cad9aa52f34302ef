import Foundation
import Logging
import PushKafka

/// The worker processes of a demo run, and the faults `--chaos` injects
/// while they work: a worker killed with SIGKILL (and a replacement
/// started), a broker down for five seconds, PostgreSQL restarted, and a
/// worker stopped with SIGTERM.
final class WorkerFleet {
    private(set) var processes: [Process] = []
    /// Processes killed on purpose (their exit status is not checked).
    private(set) var killed: Set<Int32> = []
    private let start: (Int) throws -> Process

    init(start: @escaping (Int) throws -> Process) { self.start = start }

    func launch(count: Int) throws {
        for _ in 0..<count { processes.append(try start(processes.count + 1)) }
    }

    var anyRunning: Bool { processes.contains { $0.isRunning } }

    func kill9(_ index: Int) {
        guard processes.indices.contains(index), processes[index].isRunning else { return }
        killed.insert(processes[index].processIdentifier)
        kill(processes[index].processIdentifier, SIGKILL)
    }

    func terminate(_ index: Int) {
        guard processes.indices.contains(index), processes[index].isRunning else { return }
        processes[index].terminate()
    }

    /// SIGTERM to all, up to 30 s each for a clean exit, then SIGKILL.
    /// Returns the exit codes of the processes not killed on purpose.
    func stopAll() async -> [Int32] {
        for p in processes where p.isRunning { p.terminate() }
        var codes: [Int32] = []
        for p in processes {
            let deadline = ContinuousClock.now + .seconds(30)
            while p.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
            }
            if !killed.contains(p.processIdentifier) { codes.append(p.terminationStatus) }
        }
        return codes
    }
}

/// Faults fired as the run progresses (by share of deliveries final).
struct DemoChaos {
    private var fired: Set<String> = []
    private var brokerUpAt: ContinuousClock.Instant?
    private(set) var log: [String] = []

    mutating func step(progress: Double, fleet: WorkerFleet, cluster: KafkaMockCluster, restartPostgres: () async -> String) async {
        if progress >= 0.10, fired.insert("kill").inserted {
            fleet.kill9(0)
            try? fleet.launch(count: 1)
            record("at \(percent(progress)): worker 1 killed with SIGKILL; a replacement started")
        }
        if progress >= 0.30, fired.insert("broker").inserted {
            do {
                try cluster.setBrokerDown(2)
                brokerUpAt = ContinuousClock.now + .seconds(5)
                record("at \(percent(progress)): broker 2 down for 5 s")
                // Up again on time even if the caller's loop is stuck behind the down broker
                // (a produce to a partition it leads waits for it): no fault may outlive its slot.
                Task.detached {
                    try? await Task.sleep(for: .seconds(5))
                    try? cluster.setBrokerUp(2)
                }
            } catch { record("broker down failed: \(error)") }
        }
        if let up = brokerUpAt, ContinuousClock.now >= up {
            brokerUpAt = nil
            do { try cluster.setBrokerUp(2); record("broker 2 up again") } catch { record("broker up failed: \(error)") }
        }
        if progress >= 0.45, fired.insert("postgres").inserted {
            record("at \(percent(progress)): " + (await restartPostgres()))
        }
        if progress >= 0.65, fired.insert("sigterm").inserted {
            fleet.terminate(1)
            record("at \(percent(progress)): worker 2 stopped with SIGTERM")
        }
    }

    /// Brings a broker still down back up (the run ended early).
    mutating func finish(cluster: KafkaMockCluster) {
        if brokerUpAt != nil {
            try? cluster.setBrokerUp(2)
            brokerUpAt = nil
        }
    }

    private mutating func record(_ line: String) {
        log.append(line)
        say("  chaos: " + line)
    }

    private func percent(_ p: Double) -> String { String(format: "%.0f%%", p * 100) }
}

/// Restarts the throwaway PostgreSQL of `scripts/with-postgres.sh` (fast
/// shutdown, then start), as an operator's failover would.
func restartThrowawayPostgres() async -> String {
    let env = ProcessInfo.processInfo.environment
    guard let bin = env["PUSHFLEET_PG_BIN"], let dataDir = env["PUSHFLEET_PG_DATADIR"] else {
        return "PostgreSQL restart skipped (not started by scripts/with-postgres.sh)"
    }
    let runAs = env["PUSHFLEET_PG_RUN_AS"] ?? ""
    var command = "\(bin)/pg_ctl -D '\(dataDir)' -m fast -w -t 60 restart -l '\(dataDir)/../server.log'"
    if !runAs.isEmpty { command = "runuser -u \(runAs) -- " + command }
    let started = ContinuousClock.now
    let status = await runShell(command + " >/dev/null 2>&1")
    return status == 0
        ? "PostgreSQL restarted (\(String(format: "%.1f", (ContinuousClock.now - started).seconds)) s)"
        : "PostgreSQL restart failed (status \(status))"
}

/// Runs `/bin/sh -c command` and waits for it with waitpid. (Foundation's
/// `Process` was seen to leave a daemonising child's shell unreaped, so
/// `isRunning` never turned false.)
func runShell(_ command: String) async -> Int32 {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
    defer { for p in argv { free(p) } }
    guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { break }
        if r < 0 { return -1 }
        try? await Task.sleep(for: .milliseconds(50))
    }
    // WIFEXITED / WEXITSTATUS by hand (macros are not imported).
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
}
