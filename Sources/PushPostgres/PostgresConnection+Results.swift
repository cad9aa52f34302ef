import CLibpq

/// Turning `PGresult`s into rows and errors (executor thread only).
extension PostgresConnection {
    static func rows(from result: OpaquePointer) -> PostgresRows {
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let names = (0..<columnCount).map { column in
            PQfname(result, Int32(column)).map { String(cString: $0) } ?? ""
        }
        let index = PostgresColumnIndex(names: names)
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            let values: [String?] = (0..<columnCount).map { column in
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 { return nil }
                return PQgetvalue(result, Int32(row), Int32(column)).map { String(cString: $0) } ?? ""
            }
            rows.append(PostgresRow(index: index, values: values))
        }
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        let tag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        return PostgresRows(columns: names, rows: rows, affectedRows: affected, commandTag: tag)
    }

    func error(from result: OpaquePointer, conn: OpaquePointer) -> PostgresError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(result, code).map { String(cString: $0) }
        }
        let sqlState = field(DiagField.sqlState)
        let primary = field(DiagField.primary) ?? Self.trimmed(PQresultErrorMessage(result))
        let message = primary.isEmpty ? Self.trimmed(PQerrorMessage(conn)) : primary
        let error: PostgresError
        if PQstatus(conn) != CONNECTION_OK {
            // The socket closed (libpq's own error, no SQLSTATE) or a FATAL
            // server error ended the session: report a retriable connection loss.
            error = PostgresError(kind: .connectionLost, sqlState: sqlState, message: message,
                                  detail: field(DiagField.detail), hint: field(DiagField.hint),
                                  file: #fileID, line: #line)
        } else {
            error = .server(sqlState: sqlState, message: message,
                            detail: field(DiagField.detail), hint: field(DiagField.hint))
        }
        logger.debug("postgres command failed", metadata: [
            "postgres.sqlstate": "\(sqlState ?? "-")", "postgres.error": "\(message)",
        ])
        return error
    }

    func connectionError(_ conn: OpaquePointer, fallback: String) -> PostgresError {
        let message = Self.trimmed(PQerrorMessage(conn))
        return .connectionLost(message.isEmpty ? fallback : message)
    }
}

/// libpq's `PG_DIAG_*` field codes (character macros, which Swift cannot import).
enum DiagField {
    static let severity = Int32(UInt8(ascii: "V"))  // non-localized severity
    static let sqlState = Int32(UInt8(ascii: "C"))
    static let primary = Int32(UInt8(ascii: "M"))
    static let detail = Int32(UInt8(ascii: "D"))
    static let hint = Int32(UInt8(ascii: "H"))
}
