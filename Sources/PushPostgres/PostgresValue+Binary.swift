import Foundation

/// One parameter as handed to libpq: type OID, bytes (nil is SQL NULL) and
/// whether the bytes are the binary or the text form.
struct PostgresParameter {
    let oid: UInt32
    let bytes: [UInt8]?
    let binary: Bool

    static func text(_ oid: UInt32, _ text: String) -> PostgresParameter {
        PostgresParameter(oid: oid, bytes: Array(text.utf8), binary: false)
    }
}

extension PostgresValue {
    /// What `query` sends: arrays in the binary wire format (the server then
    /// neither parses an array literal nor each element's text: `array_in`
    /// was a tenth of its CPU on batched writes), scalars as text.
    func parameter() throws -> PostgresParameter {
        switch self {
        case .textArray(let values):
            return PostgresParameter(oid: TypeOID.textArray, bytes: try BinaryArray.encode(values, element: TypeOID.text) { value, out in
                try Self.appendChecked(value, to: &out)
            }, binary: true)
        case .intArray(let values):
            return PostgresParameter(oid: TypeOID.int8Array, bytes: BinaryArray.encode(values, element: TypeOID.int8) { value, out in
                BinaryArray.append(UInt64(bitPattern: value), to: &out)
            }, binary: true)
        case .timestampArray(let values):
            return PostgresParameter(oid: TypeOID.timestamptzArray, bytes: BinaryArray.encode(values, element: TypeOID.timestamptz) { value, out in
                BinaryArray.append(UInt64(bitPattern: PostgresTimestamp.microsecondsSince2000(value)), to: &out)
            }, binary: true)
        case .uuidArray(let values):
            return PostgresParameter(oid: TypeOID.uuidArray, bytes: BinaryArray.encode(values, element: TypeOID.uuid) { value, out in
                withUnsafeBytes(of: value.uuid) { out.append(contentsOf: $0) }
            }, binary: true)
        case .doubleArray(let values):
            // `float8send`: the IEEE 754 bits, big-endian (NaN and the infinities included).
            return PostgresParameter(oid: TypeOID.float8Array, bytes: BinaryArray.encode(values, element: TypeOID.float8) { value, out in
                BinaryArray.append(value.bitPattern, to: &out)
            }, binary: true)
        case .null:
            return PostgresParameter(oid: TypeOID.unspecified, bytes: nil, binary: false)
        case .text(let value):
            return .text(TypeOID.text, try Self.checked(value))
        case .int(let value):
            return .text(TypeOID.int8, String(value))
        case .double(let value):
            return .text(TypeOID.float8, Self.encode(value))
        case .bool(let value):
            return .text(TypeOID.bool, value ? "t" : "f")
        case .bytes(let value):
            return .text(TypeOID.bytea, Self.hexBytea(value))
        case .timestamp(let value):
            return .text(TypeOID.timestamptz, PostgresTimestamp.format(value))
        case .uuid(let value):
            return .text(TypeOID.uuid, value.uuidString)
        case .jsonb(let value):
            return .text(TypeOID.jsonb, try Self.checked(value))
        }
    }
}

/// PostgreSQL's binary array format (`array_send`): dimensions, a null flag,
/// the element type, then each element as a big-endian length (-1 for NULL)
/// and its binary form.
enum BinaryArray {
    static func encode<T>(_ elements: [T?], element oid: UInt32,
                          _ write: (T, inout [UInt8]) throws -> Void) rethrows -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(20 + elements.count * 24)
        let hasNull = elements.contains { $0 == nil }
        append(UInt32(elements.isEmpty ? 0 : 1), to: &out)  // dimensions
        append(UInt32(hasNull ? 1 : 0), to: &out)
        append(oid, to: &out)
        if !elements.isEmpty {
            append(UInt32(elements.count), to: &out)  // length of the dimension
            append(UInt32(1), to: &out)  // lower bound
        }
        for element in elements {
            guard let element else {
                append(UInt32(bitPattern: -1), to: &out)
                continue
            }
            let lengthAt = out.count
            append(UInt32(0), to: &out)
            try write(element, &out)
            let length = UInt32(out.count - lengthAt - 4)
            out.withUnsafeMutableBytes { bytes in
                bytes.storeBytes(of: length.bigEndian, toByteOffset: lengthAt, as: UInt32.self)
            }
        }
        return out
    }

    static func append(_ value: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }
}

extension PostgresTimestamp {
    /// Microseconds since 2000-01-01 00:00:00 UTC, the binary `timestamptz`;
    /// values outside the representable range become ±infinity, as in `format`.
    static func microsecondsSince2000(_ date: Date) -> Int64 {
        // Rounded exactly as the text form is, then shifted by whole microseconds.
        let scaled = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e18 else { return scaled < 0 ? .min : .max }
        return Int64(scaled) - 946_684_800_000_000
    }
}
