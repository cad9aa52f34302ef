import Foundation

/// Typed accessors. Each returns nil for SQL NULL and throws
/// `PostgresError.decoding` for a missing column or a value of another type.
extension PostgresRow {
    /// An integer column (int2/int4/int8).
    public func int(_ column: String) throws -> Int64? {
        try decode(column, as: "integer") { Int64($0) }
    }

    /// A float column (float4/float8/numeric; also `NaN`, `Infinity`).
    public func double(_ column: String) throws -> Double? {
        try decode(column, as: "double") { text in
            switch text {
            case "NaN": return Double.nan
            case "Infinity": return Double.infinity
            case "-Infinity": return -Double.infinity
            default: return Double(text)
            }
        }
    }

    /// A `bool` column (`t`/`f`).
    public func bool(_ column: String) throws -> Bool? {
        try decode(column, as: "bool") { text in
            switch text {
            case "t", "true": return true
            case "f", "false": return false
            default: return nil
            }
        }
    }

    /// A `timestamptz` column (the connection sets `DateStyle=ISO`, `TimeZone=UTC`).
    public func date(_ column: String) throws -> Date? {
        try decode(column, as: "timestamptz") { PostgresTimestamp.parse($0) }
    }

    /// A `uuid` column.
    public func uuid(_ column: String) throws -> UUID? {
        try decode(column, as: "uuid") { UUID(uuidString: $0) }
    }

    /// A `bytea` column (hex output format, the server default).
    public func bytes(_ column: String) throws -> [UInt8]? {
        try decode(column, as: "bytea") { Self.parseHexBytea($0) }
    }

    /// A text column; like the subscript but throws if the column is missing.
    public func string(_ column: String) throws -> String? {
        try decode(column, as: "text") { $0 }
    }

    private func decode<T>(_ column: String, as type: String, _ parse: (String) -> T?) throws -> T? {
        guard let position = index.position(of: column) else {
            throw PostgresError.decoding("no column \"\(column)\" in result (columns: \(index.names))")
        }
        guard let text = values[position] else { return nil }
        guard let value = parse(text) else {
            throw PostgresError.decoding("column \"\(column)\": \"\(text.prefix(64))\" is not a valid \(type)")
        }
        return value
    }

    static func parseHexBytea(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == 0x5C, utf8[1] == 0x78, utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var position = 2
        while position < utf8.count {
            guard let high = hexValue(utf8[position]), let low = hexValue(utf8[position + 1]) else { return nil }
            bytes.append(high << 4 | low)
            position += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x61...0x66: return byte - 0x61 + 10
        case 0x41...0x46: return byte - 0x41 + 10
        default: return nil
        }
    }
}
