extension PostgresConnection {
    /// Runs `body` inside `BEGIN` … `COMMIT`; any error thrown by `body` rolls
    /// the transaction back and is rethrown.
    ///
    /// If a statement inside failed and `body` swallowed the error, the server
    /// turns `COMMIT` into a rollback: that is reported as an error (SQLSTATE
    /// 25P02), never as success. Not reentrant: use savepoints yourself if you
    /// need nesting.
    public func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await query("BEGIN")
        let value: T
        do {
            value = try await body(self)
        } catch {
            if !isBroken {
                do {
                    try await query("ROLLBACK")
                } catch let rollbackError {
                    logger.warning("postgres rollback failed", metadata: ["postgres.error": "\(rollbackError)"])
                }
            }
            throw error
        }
        let commit = try await query("COMMIT")
        if commit.commandTag == "ROLLBACK" {
            throw PostgresError.server(
                sqlState: "25P02",
                message: "transaction was aborted by an earlier failed statement; COMMIT rolled it back")
        }
        return value
    }
}
