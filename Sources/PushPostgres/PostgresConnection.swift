import CLibpq
import Foundation
import Logging

/// One libpq connection.
///
/// Every blocking libpq call runs on this connection's own dedicated thread
/// (see `BlockingExecutor`), never on Swift's cooperative pool; callers await
/// it through a continuation. Commands run one at a time in submission order:
/// use a connection from one task at a time (the pool guarantees that), since
/// interleaved commands from two tasks would share a transaction.
///
/// The session is set to `TimeZone=UTC`, `DateStyle=ISO` and UTF-8 on
/// connect, so text results parse the same way everywhere.
///
/// `@unchecked Sendable`: `handle`, `cancelHandle` and `noticeSink` are only
/// touched on the executor's thread (and in `deinit`, when nothing else can
/// reach the object); the flags readable from any thread live in `status`,
/// behind a lock.
public final class PostgresConnection: @unchecked Sendable {
    let executor: BlockingExecutor
    let logger: Logger
    /// Process-unique number, for logs.
    public let id: Int

    /// The libpq connection; only touched on the executor's thread.
    var handle: OpaquePointer?
    /// For `PQcancel` from another thread (read-only for libpq after creation).
    var cancelHandle: OpaquePointer?
    /// Retained context of the notice receiver; released after `PQfinish`.
    var noticeSink: Unmanaged<NoticeSink>?
    /// Statement names prepared on this session, by SQL text (executor's thread only).
    var prepared: [String: String] = [:]
    /// Last number used in a prepared statement's name (executor's thread only).
    var preparedSerial = 0

    let status = LockedStatus()

    private init(logger: Logger) {
        self.id = ConnectionCounter.next()
        var logger = logger
        logger[metadataKey: "postgres.connection_id"] = "\(id)"
        self.logger = logger
        self.executor = BlockingExecutor(name: "pg.\(id)")
    }

    deinit {
        if let handle { PQfinish(handle) }
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        noticeSink?.release()
        executor.shutdown()
    }

    /// Opens a connection. `url` is a libpq connection string or
    /// `postgresql://user@host:port/db?...` URL; `application_name=pushfleet`,
    /// `connect_timeout=10` and TCP keepalives are used unless the URL sets them.
    public static func connect(url: String, logger: Logger) async throws -> PostgresConnection {
        let connection = PostgresConnection(logger: logger)
        do {
            try await connection.executor.run { try connection.openOnThread(url: url) }
        } catch {
            connection.close()
            throw error
        }
        connection.logger.debug("postgres connection opened")
        return connection
    }

    /// True once the connection is closed or libpq reports it broken
    /// (`PQstatus != CONNECTION_OK`). A broken connection never recovers.
    public var isBroken: Bool { status.isBroken }

    /// True when the last command left the session inside a transaction block.
    public var isInTransaction: Bool { status.inTransaction }

    /// Closes the connection after any queued command. Idempotent.
    public func close() {
        guard status.markClosed() else { return }
        executor.enqueue { [self] in
            if let handle {
                PQfinish(handle)
                self.handle = nil
            }
        }
        executor.shutdown()
        logger.debug("postgres connection closed")
    }

    /// Connection parameters used unless the URL gives its own.
    private static let defaults: [(String, String)] = [
        ("application_name", "pushfleet"),
        ("connect_timeout", "10"),
        ("keepalives", "1"),
        ("keepalives_idle", "30"),
        ("keepalives_interval", "10"),
        ("keepalives_count", "3"),
    ]

    private func openOnThread(url: String) throws {
        // Later keywords override earlier ones, and the expanded `dbname` URL
        // sits between the defaults and the settings we insist on.
        let pairs = Self.defaults + [("dbname", url), ("client_encoding", "UTF8")]
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordPointers = keywords.map { $0.map { UnsafePointer($0) } } + [nil]
        let valuePointers = values.map { $0.map { UnsafePointer($0) } } + [nil]
        guard let conn = PQconnectdbParams(keywordPointers, valuePointers, 1) else {
            throw PostgresError.connectionFailed("PQconnectdbParams returned NULL (out of memory)")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(conn))
            PQfinish(conn)
            throw PostgresError.connectionFailed(message.isEmpty ? "connection failed" : message)
        }
        handle = conn
        cancelHandle = PQgetCancel(conn)
        let sink = Unmanaged.passRetained(NoticeSink(logger: logger))
        noticeSink = sink
        PQsetNoticeReceiver(conn, noticeReceiver, sink.toOpaque())
        status.update(ok: true, inTransaction: false)
        _ = try executeOnThread("SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'")
    }

    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
