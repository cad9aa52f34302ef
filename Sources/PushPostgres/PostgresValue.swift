import Foundation

/// A bound parameter.
///
/// Sent in text format with an explicit type OID, so the server never has to
/// guess (`$1::uuid` is unnecessary but allowed). Values are always bound,
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
        static let textArray: UInt32 = 1009
        static let int8Array: UInt32 = 1016
        static let timestamptz: UInt32 = 1184
        static let timestamptzArray: UInt32 = 1185
        static let uuid: UInt32 = 2950
        static let uuidArray: UInt32 = 2951
        static let jsonb: UInt32 = 3802
    }

    /// The type OID and text form sent for this value (nil text is SQL NULL).
    func encoded() throws -> (oid: UInt32, text: String?) {
        switch self {
        case .null:
            return (TypeOID.unspecified, nil)
        case .text(let value):
            return (TypeOID.text, try Self.checked(value))
        case .int(let value):
            return (TypeOID.int8, String(value))
        case .double(let value):
            return (TypeOID.float8, Self.encode(value))
        case .bool(let value):
            return (TypeOID.bool, value ? "t" : "f")
        case .bytes(let value):
            return (TypeOID.bytea, Self.hexBytea(value))
        case .timestamp(let value):
            return (TypeOID.timestamptz, PostgresTimestamp.format(value))
        case .uuid(let value):
            return (TypeOID.uuid, value.uuidString)
        case .jsonb(let value):
            return (TypeOID.jsonb, try Self.checked(value))
        case .textArray(let values):
            return (TypeOID.textArray, PostgresArrayLiteral.encode(try values.map { try $0.map(Self.checked) }))
        case .intArray(let values):
            return (TypeOID.int8Array, PostgresArrayLiteral.encode(values.map { $0.map { String($0) } }))
        case .timestampArray(let values):
            return (TypeOID.timestamptzArray, PostgresArrayLiteral.encode(values, bytesPerElement: 36, PostgresTimestamp.append))
        case .uuidArray(let values):
            return (TypeOID.uuidArray, PostgresArrayLiteral.encode(values, bytesPerElement: 36, Self.appendUUID))
        }
    }

    /// Text cannot contain NUL: libpq would silently truncate it, so refuse instead.
    private static func checked(_ value: String) throws -> String {
        if value.utf8.contains(0) {
            throw PostgresError.invalidValue("text values cannot contain NUL (U+0000)")
        }
        return value
    }

    private static func encode(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return String(value)  // shortest representation that round-trips
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A UUID's canonical lower-case text (`8-4-4-4-12` hex digits).
    static func appendUUID(_ uuid: UUID, to out: inout [UInt8]) {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

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

/// Array literals (`{"a","b\"c",NULL}`) for array parameters.
enum PostgresArrayLiteral {
    /// Every element is double-quoted with `\` and `"` escaped, so commas,
    /// braces, whitespace and the word NULL inside a value stay data.
    static func encode(_ elements: [String?]) -> String {
        // Built as UTF-8 bytes: `\\` and `"` are ASCII and never occur inside a
        // multi-byte UTF-8 sequence, so escaping byte by byte is exact, and one
        // buffer replaces a String append per scalar (the hot spot of batch writes).
        var capacity = 2 + elements.count * 3
        for element in elements { capacity += element?.utf8.count ?? 4 }
        var out: [UInt8] = []
        out.reserveCapacity(capacity + 16)
        out.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let element else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// An array of values whose text form needs no escaping (timestamps,
    /// UUIDs), each written straight into the literal by `append`.
    static func encode<T>(_ elements: [T?], bytesPerElement: Int, _ append: (T, inout [UInt8]) -> Void) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(2 + elements.count * (bytesPerElement + 3))
        out.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let element else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            append(element, &out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
