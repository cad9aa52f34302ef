import Foundation

/// A bound parameter.
///
/// Sent with an explicit type OID, so the server never has to guess
/// (`$1::uuid` is unnecessary but allowed): scalars in text format, arrays in
/// the binary format (`PostgresValue+Binary.swift`). Values are always bound,
/// never interpolated into SQL. The array cases exist for batched writes:
/// `INSERT ... SELECT * FROM unnest($1::text[], $2::int8[])`.
public enum PostgresValue: Sendable, Equatable {
    /// SQL NULL of unspecified type (the server infers it from context).
    case null
    /// `text`.
    case text(String)
    /// `int8` (assignable to int2/int4 columns).
    case int(Int64)
    /// `float8`, including infinities and NaN.
    case double(Double)
    /// `bool`.
    case bool(Bool)
    /// `bytea`.
    case bytes([UInt8])
    /// `timestamptz`, sent in UTC with microseconds (the server's resolution).
    case timestamp(Date)
    /// `uuid`.
    case uuid(UUID)
    /// `jsonb`, as JSON text.
    case jsonb(String)
    /// `text[]`; nil elements are NULL.
    case textArray([String?])
    /// `int8[]`; nil elements are NULL.
    case intArray([Int64?])
    /// `timestamptz[]`; nil elements are NULL.
    case timestampArray([Date?])
    /// `uuid[]`; nil elements are NULL.
    case uuidArray([UUID?])
    /// `float8[]`, including infinities and NaN; nil elements are NULL.
    case doubleArray([Double?])
}

extension PostgresValue {
    /// Type OIDs from the server's `pg_type` catalogue (stable across versions).
    enum TypeOID {
        static let unspecified: UInt32 = 0
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let text: UInt32 = 25
        static let float8: UInt32 = 701
        static let float8Array: UInt32 = 1022
        static let textArray: UInt32 = 1009
        static let int8Array: UInt32 = 1016
        static let timestamptz: UInt32 = 1184
        static let timestamptzArray: UInt32 = 1185
        static let uuid: UInt32 = 2950
        static let uuidArray: UInt32 = 2951
        static let jsonb: UInt32 = 3802
    }

    /// Text cannot contain NUL: libpq would silently truncate it, so refuse instead.
    static func checked(_ value: String) throws -> String {
        // A native string's UTF-8 is contiguous: scan the buffer, not the
        // generic UTF8View iterator (1.8 % of a worker's pool threads on batch writes).
        let hasNUL = value.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? value.utf8.contains(0)
        if hasNUL { throw nulInText }
        return value
    }

    static let nulInText = PostgresError.invalidValue("text values cannot contain NUL (U+0000)")

    /// Appends a text value's UTF-8, refusing NUL as `checked` does; a native
    /// string is scanned and copied from its own buffer in one pass, without
    /// the retained copy `checked` returns.
    static func appendChecked(_ value: String, to out: inout [UInt8]) throws {
        let appended: Bool? = try value.utf8.withContiguousStorageIfAvailable { bytes in
            if bytes.contains(0) { throw nulInText }
            out.append(contentsOf: bytes)
            return true
        }
        if appended == nil { out.append(contentsOf: try checked(value).utf8) }
    }

    static func encode(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return String(value)  // shortest representation that round-trips
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `\x0a1b…`, the server's hex bytea input format.
    static func hexBytea(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = [0x5C, 0x78]  // "\x"
        out.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
