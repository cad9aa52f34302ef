/// The result of one command: column names, rows (text format) and the
/// number of rows the command affected.
public struct PostgresRows: Sendable, Sequence {
    /// Column names in result order.
    public var columns: [String]
    /// The rows, in the order the server sent them.
    public var rows: [PostgresRow]
    /// Rows inserted/updated/deleted/selected, from the command tag (0 if none).
    public var affectedRows: Int
    /// The server's command tag, e.g. `INSERT 0 3`, `COMMIT`, `ROLLBACK`.
    public var commandTag: String

    public init(columns: [String], rows: [PostgresRow], affectedRows: Int, commandTag: String = "") {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }

    /// Number of rows returned.
    public var count: Int { rows.count }

    public func makeIterator() -> IndexingIterator<[PostgresRow]> {
        rows.makeIterator()
    }
}

/// Column name → index, shared by all rows of one result.
final class PostgresColumnIndex: Sendable {
    let names: [String]
    private let positions: [String: Int]

    init(names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        // The first column wins when a name repeats, as in most drivers.
        for (index, name) in names.enumerated() where positions[name] == nil {
            positions[name] = index
        }
        self.positions = positions
    }

    func position(of name: String) -> Int? { positions[name] }
}

/// One result row. Values are the server's text output; nil is SQL NULL.
public struct PostgresRow: Sendable {
    let index: PostgresColumnIndex
    /// The values in column order (nil for NULL).
    public let values: [String?]

    init(index: PostgresColumnIndex, values: [String?]) {
        self.index = index
        self.values = values
    }

    /// The text value of the named column; nil if NULL or no such column.
    public subscript(_ column: String) -> String? {
        guard let position = index.position(of: column) else { return nil }
        return values[position]
    }

    /// The text value at a column position; nil if NULL or out of range.
    public subscript(_ position: Int) -> String? {
        guard values.indices.contains(position) else { return nil }
        return values[position]
    }

    /// Whether the named column exists in this result.
    public func hasColumn(_ column: String) -> Bool {
        index.position(of: column) != nil
    }
}
