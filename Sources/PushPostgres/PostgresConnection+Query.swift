import CLibpq
import Foundation

extension PostgresConnection {
    /// Runs one statement with bound parameters (`$1`, `$2`, ...) and returns
    /// its rows in text format. Values are never interpolated into `sql`.
    ///
    /// Cancelling the calling task sends a cancel request to the server; the
    /// statement then fails with SQLSTATE 57014.
    @discardableResult
    public func query(_ sql: String, _ binds: [PostgresValue] = []) async throws -> PostgresRows {
        let encoded = try binds.map { try $0.parameter() }
        return try await runCancellable { connection in
            try connection.queryOnThread(sql, encoded)
        }
    }

    /// Like `query`, for a statement run again and again (batched writes, the
    /// ledger check): prepared once per connection, so later runs skip the
    /// server's parse and plan. `sql` must be fixed text (values are bound),
    /// and every run must bind values of the same types.
    @discardableResult
    public func query(prepared sql: String, _ binds: [PostgresValue] = []) async throws -> PostgresRows {
        let encoded = try binds.map { try $0.parameter() }
        return try await runCancellable { connection in
            try connection.queryOnThread(sql, encoded, prepare: true)
        }
    }

    /// Runs one or more `;`-separated statements with the simple query
    /// protocol (no parameters), e.g. a migration file. Inside an explicit
    /// transaction they share it; otherwise the server runs them as one
    /// implicit transaction.
    public func execute(_ sql: String) async throws {
        _ = try await runCancellable { connection in
            try connection.executeOnThread(sql)
        }
    }

    private func runCancellable<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        guard !status.isClosed else { throw PostgresError.closed("connection is closed") }
        return try await withTaskCancellationHandler {
            try await executor.run { [self] in try body(self) }
        } onCancel: {
            self.requestCancel()
        }
    }

    /// Asks the server to cancel whatever this connection is running. `PQcancel`
    /// opens its own connection (blocking), so it runs on a global queue.
    /// A cancel that arrives after the statement finished has no effect.
    private func requestCancel() {
        DispatchQueue.global().async { [self] in
            guard let cancelHandle else { return }
            var buffer = [CChar](repeating: 0, count: 256)
            if PQcancel(cancelHandle, &buffer, Int32(buffer.count)) == 0 {
                let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                logger.debug("postgres cancel request failed", metadata: ["postgres.error": "\(message)"])
            }
        }
    }

    func queryOnThread(_ sql: String, _ params: [PostgresParameter], prepare: Bool = false) throws -> PostgresRows {
        guard let conn = handle else { throw PostgresError.closed("connection is closed") }
        let types: [Oid] = params.map { Oid($0.oid) }
        let lengths: [Int32] = params.map { Int32(clamping: $0.bytes?.count ?? 0) }
        let formats: [Int32] = params.map { $0.binary ? 1 : 0 }
        // Text values need a terminating NUL; binary ones are passed with their length.
        let values: [UnsafeMutablePointer<CChar>?] = params.map { param in
            guard let bytes = param.bytes else { return nil }
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: bytes.count) }
            }
            copy[bytes.count] = 0
            return copy
        }
        defer { values.forEach { $0?.deallocate() } }
        let valuePointers = values.map { $0.map { UnsafePointer($0) } }
        guard prepare else {
            return try consume(PQexecParams(conn, sql, Int32(params.count), types, valuePointers, lengths, formats, 0), conn: conn)
        }
        return try runPrepared(sql, types, valuePointers, lengths, formats)
    }

    /// Prepares `sql` on this session the first time, then executes it. A pooler
    /// between us and the server (PgBouncer in transaction mode without its
    /// prepared-statement support) can make a name unknown (26000) or already
    /// taken (42P05) on the server session it picks: outside a transaction that
    /// is repaired once by preparing again under a new name; inside one the
    /// error surfaces (the transaction is aborted) and the next try prepares again.
    private func runPrepared(_ sql: String, _ types: [Oid], _ values: [UnsafePointer<CChar>?],
                             _ lengths: [Int32], _ formats: [Int32]) throws -> PostgresRows {
        guard let conn = handle else { throw PostgresError.closed("connection is closed") }
        let count = Int32(types.count)
        var repaired = false
        while true {
            do {
                let name: String
                if let known = prepared[sql] {
                    name = known
                } else {
                    // Prepared statements outlive transactions (even rolled-back ones), so
                    // the name is recorded only once the server has accepted it.
                    preparedSerial += 1
                    name = "pushfleet_\(preparedSerial)"
                    _ = try consume(PQprepare(conn, name, sql, count, types), conn: conn)
                    prepared[sql] = name
                }
                return try consume(PQexecPrepared(conn, name, count, values, lengths, formats, 0), conn: conn)
            } catch let error as PostgresError where ["26000", "42P05"].contains(error.sqlState ?? "") {
                // Forgotten either way: a transaction the error aborted is retried whole
                // by its caller (26000 is retriable), and then prepares again.
                prepared[sql] = nil
                guard !repaired, !status.inTransaction else { throw error }
                logger.warning("prepared statement lost by the server session; preparing it again",
                               metadata: ["postgres.error": "\(error)"])
                repaired = true
            }
        }
    }

    func executeOnThread(_ sql: String) throws -> PostgresRows {
        guard let conn = handle else { throw PostgresError.closed("connection is closed") }
        return try consume(PQexec(conn, sql), conn: conn)
    }

    /// Turns a `PGresult` into rows or an error, frees it, and records the
    /// connection's health and transaction state.
    private func consume(_ result: OpaquePointer?, conn: OpaquePointer) throws -> PostgresRows {
        defer { refreshStatus(conn) }
        guard let result else {
            throw connectionError(conn, fallback: "no result from server")
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.rows(from: result)
        default:
            throw error(from: result, conn: conn)
        }
    }
}
