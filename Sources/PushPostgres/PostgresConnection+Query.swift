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
        let encoded = try binds.map { try $0.encoded() }
        return try await runCancellable { connection in
            try connection.queryOnThread(sql, encoded)
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

    func queryOnThread(_ sql: String, _ params: [(oid: UInt32, text: String?)]) throws -> PostgresRows {
        guard let conn = handle else { throw PostgresError.closed("connection is closed") }
        let types: [Oid] = params.map { Oid($0.oid) }
        let values = params.map { $0.text.flatMap { strdup($0) } }
        defer { values.forEach { free($0) } }
        for (index, param) in params.enumerated() where param.text != nil && values[index] == nil {
            throw PostgresError.invalidValue("out of memory copying parameter $\(index + 1)")
        }
        let valuePointers = values.map { $0.map { UnsafePointer($0) } }
        let result = PQexecParams(conn, sql, Int32(params.count), types, valuePointers, nil, nil, 0)
        return try consume(result, conn: conn)
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
