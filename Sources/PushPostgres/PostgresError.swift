/// An error from PushPostgres: a server error (with its SQLSTATE), a lost or
/// failed connection, a value that cannot be sent or read, or a migration
/// problem.
///
/// Callers decide what to do from `isRetriable`: retriable errors mean "the
/// same work may succeed on a fresh connection or a little later" (connection
/// loss, server restart, serialization failure, deadlock, too many
/// connections). Note that a write whose connection was lost may or may not
/// have been committed.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, independent of the server's SQLSTATE.
    public enum Kind: String, Sendable, Equatable {
        /// `PQconnectdb` did not produce a usable connection.
        case connectionFailed
        /// The connection broke during or before a command.
        case connectionLost
        /// The server rejected a command (see `sqlState`).
        case server
        /// A bound value cannot be sent (e.g. a string containing NUL).
        case invalidValue
        /// A result value is not of the requested type.
        case decoding
        /// The connection or pool was closed by us.
        case closed
        /// The migrator refused to run (changed checksum, bad file name, ...).
        case migration
    }

    /// The category of the failure.
    public let kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public let sqlState: String?
    /// The primary human-readable message.
    public let message: String
    /// The server's DETAIL field, if any.
    public let detail: String?
    /// The server's HINT field, if any.
    public let hint: String?
    /// Where in PushPostgres the error was raised.
    public let file: String
    /// Line in `file`.
    public let line: Int

    init(kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil, hint: String? = nil,
         file: String, line: Int) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.file = file
        self.line = line
    }

    /// SQLSTATEs that mean "try again, possibly on a new connection". 26000: a
    /// prepared statement the server session lost (a pooler); the connection
    /// forgets it and prepares it again on the next try.
    static let retriableStates: Set<String> = ["57P01", "57P02", "57P03", "40001", "40P01", "53300", "26000"]

    /// Whether repeating the work (on a fresh connection, after a pause) may succeed.
    public var isRetriable: Bool {
        switch kind {
        case .connectionFailed, .connectionLost:
            return true
        case .server:
            guard let state = sqlState else { return false }
            return state.hasPrefix("08") || Self.retriableStates.contains(state)
        case .invalidValue, .decoding, .closed, .migration:
            return false
        }
    }

    /// Whether the error is about the values sent, not about the server or
    /// the connection: a value libpq cannot send (NUL in text), or a server
    /// error of SQLSTATE class 22 (data exception), 23 (integrity constraint
    /// violation) or 54 (program limit exceeded, e.g. an index row too big).
    /// Repeating the same statement fails the same way; leaving the
    /// offending rows out lets the rest through.
    public var isDataError: Bool {
        switch kind {
        case .invalidValue:
            return true
        case .server:
            guard let state = sqlState else { return false }
            return state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("54")
        case .connectionFailed, .connectionLost, .decoding, .closed, .migration:
            return false
        }
    }

    public var description: String {
        var text = "PostgresError.\(kind.rawValue)"
        if let sqlState { text += " [\(sqlState)]" }
        text += ": \(message)"
        if let detail { text += " (detail: \(detail))" }
        if let hint { text += " (hint: \(hint))" }
        text += " at \(file):\(line)"
        return text
    }

    /// A connection attempt failed.
    public static func connectionFailed(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .connectionFailed, message: message, file: file, line: line)
    }

    /// The connection was lost (no SQLSTATE from the server).
    public static func connectionLost(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .connectionLost, message: message, file: file, line: line)
    }

    /// The server reported an error.
    public static func server(sqlState: String?, message: String, detail: String? = nil, hint: String? = nil,
                              file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .server, sqlState: sqlState, message: message, detail: detail, hint: hint, file: file, line: line)
    }

    /// A bound value cannot be encoded.
    public static func invalidValue(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .invalidValue, message: message, file: file, line: line)
    }

    /// A result value could not be decoded.
    public static func decoding(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .decoding, message: message, file: file, line: line)
    }

    /// The connection or pool is closed.
    public static func closed(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .closed, message: message, file: file, line: line)
    }

    /// The migrator refused to run.
    public static func migration(_ message: String, file: String = #fileID, line: Int = #line) -> Self {
        Self(kind: .migration, message: message, file: file, line: line)
    }
}
