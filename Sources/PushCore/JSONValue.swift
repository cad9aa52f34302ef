import Foundation

/// A JSON value with deterministic serialisation (object keys keep their
/// insertion order), so translated payloads are byte-for-byte reproducible and
/// measurable against the providers' size limits.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Compact JSON bytes.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(), abs(d) < 1e15 {
                    out.append(contentsOf: String(Int64(d)).utf8)
                } else {
                    out.append(contentsOf: "\(d)".utf8)
                }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        // Runs of bytes that need no escaping are copied in one go (the common case: all of them).
        s.withUTF8 { utf8 in
            var runStart = 0
            for i in utf8.indices {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
                appendEscaped(byte, into: &out)
                runStart = i + 1
            }
            if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ byte: UInt8, into out: inout [UInt8]) {
        out.append(0x5C)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            }
        }
    }

    /// Parses JSON bytes (objects keep their key order). See `JSONParser`.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(bytes)
    }
}

/// JSON that could not be parsed (or holds what intake refuses), with its reason code.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
    public var message: String
    /// The class of problem: `not_json`, `too_deep`, `byte_order_mark`,
    /// `invalid_utf8`, `nul_character`, `number_out_of_range` or `duplicate_key`.
    public var reason: IntakeReason
    /// Where a content error (NUL, UTF-8, number, duplicate key) was found,
    /// e.g. `recipients[0].token`; `$` for the whole document and for syntax errors.
    public var path: String

    init(message: String, reason: IntakeReason = .notJSON, path: String = "$") {
        self.message = message
        self.reason = reason
        self.path = path
    }

    public var description: String { message }

    /// Whether the path is worth tracking: only content errors have one.
    private var isLocated: Bool {
        reason == .nulCharacter || reason == .invalidUTF8 || reason == .numberOutOfRange || reason == .duplicateKey
    }

    /// This error, found in the value of member `key`.
    func inside(key: String) -> JSONParseError {
        guard isLocated else { return self }
        var e = self
        e.path = path == "$" ? key : path.hasPrefix("[") ? key + path : key + "." + path
        return e
    }

    /// This error, found in the array element `index`.
    func inside(index: Int) -> JSONParseError {
        guard isLocated else { return self }
        var e = self
        e.path = path == "$" ? "[\(index)]" : path.hasPrefix("[") ? "[\(index)]" + path : "[\(index)]." + path
        return e
    }

    /// This error, found in an object's key: the path stays the object's
    /// (the key itself cannot be shown), the message says it was a key.
    func inKey() -> JSONParseError {
        guard isLocated else { return self }
        var e = self
        e.message = "in a key: " + message
        return e
    }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let i = try? c.decode(Int64.self) { self = .int(i); return }
        if let d = try? c.decode(Double.self) { self = .double(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let a = try? c.decode([JSONValue].self) { self = .array(a); return }
        let o = try c.decode([String: JSONValue].self)
        self = .object(o.keys.sorted().map { ($0, o[$0] ?? .null) })
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(Dictionary(o.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }))
        }
    }
}
