import Foundation
import PushPostgres
import XCTest

/// Restarts the whole server started by `scripts/with-postgres.sh`
/// (it exports the data and bin directories for exactly this).
final class PostgresRestartTests: XCTestCase {
    private struct Server {
        var dataDirectory: String
        var binDirectory: String
        var runAs: String

        /// Runs pg_ctl (as the server's user) and waits for it. Uses posix_spawn
        /// and waitpid directly: Foundation's Process can miss the exit of a
        /// child whose grandchild (the postmaster) daemonizes.
        func pgCtl(_ arguments: [String]) async throws {
            let pgCtl = (binDirectory as NSString).appendingPathComponent("pg_ctl")
            let argv = runAs.isEmpty ? [pgCtl] + arguments : ["/usr/sbin/runuser", "-u", runAs, "--", pgCtl] + arguments
            let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, Error>) in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try spawnAndWait(argv) })
                }
            }
            XCTAssertEqual(status, 0, "pg_ctl \(arguments)")
        }

        func stop() async throws { try await pgCtl(["-D", dataDirectory, "-m", "fast", "-w", "stop"]) }

        func start() async throws {
            let log = ((dataDirectory as NSString).deletingLastPathComponent as NSString)
                .appendingPathComponent("server.log")
            try await pgCtl(["-D", dataDirectory, "-l", log, "-w", "start"])
        }
    }

    private func server() throws -> Server {
        _ = try TestDatabase.url()
        let environment = ProcessInfo.processInfo.environment
        guard let data = environment["PUSHFLEET_PG_DATADIR"], let bin = environment["PUSHFLEET_PG_BIN"] else {
            throw XCTSkip("needs PUSHFLEET_PG_DATADIR/PUSHFLEET_PG_BIN from scripts/with-postgres.sh")
        }
        return Server(dataDirectory: data, binDirectory: bin, runAs: environment["PUSHFLEET_PG_RUN_AS"] ?? "")
    }

    func testPoolReconnectsWithBackoffAfterAServerRestart() async throws {
        let server = try server()
        let pool = PostgresPool(url: try TestDatabase.url(), size: 2, logger: TestDatabase.logger, connectAttempts: 8)
        let before = try await pool.withConnection { connection in
            try await connection.query("SELECT pg_postmaster_start_time() AS t").first?.date("t")
        }

        try await server.stop()
        // While the server is down, a checkout fails with a retriable error after its retries.
        let downPool = PostgresPool(url: try TestDatabase.url(), size: 1, logger: TestDatabase.logger, connectAttempts: 1)
        let down = await expectPostgresError { try await downPool.withConnection { _ in 1 } }
        XCTAssertEqual(down?.isRetriable, true)
        await downPool.close()

        // Bring it back shortly; the pool's reconnect backoff bridges the gap.
        let restart = Task.detached {
            try await Task.sleep(nanoseconds: 300_000_000)
            try await server.start()
        }
        let after = try await pool.withConnection { connection in
            try await connection.query("SELECT pg_postmaster_start_time() AS t").first?.date("t")
        }
        try await restart.value
        XCTAssertNotNil(before)
        XCTAssertNotNil(after)
        XCTAssertNotEqual(before, after, "served by the restarted server")
        await pool.close()
    }
}

private struct SpawnFailed: Error {
    var code: Int32
}

/// posix_spawn + waitpid; returns the exit status (blocking: call off the cooperative pool).
private func spawnAndWait(_ argv: [String]) throws -> Int32 {
    var cArguments = argv.map { strdup($0) } + [nil]
    defer { cArguments.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, argv[0], nil, nil, &cArguments, environ)
    guard spawned == 0 else { throw SpawnFailed(code: spawned) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return (status >> 8) & 0xFF
}
