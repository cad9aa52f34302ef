/// A small strict JSON parser (RFC 8259) over bytes. It keeps object key
/// order, rejects trailing garbage and bounds nesting depth, so hostile input
/// gets a specific error instead of a crash or a stack overflow.
///
/// Beyond RFC 8259 it refuses what no store or provider downstream can hold,
/// each with its `IntakeReason`: a byte order mark, invalid UTF-8 (checked
/// while a string is scanned, not in a second pass), U+0000 in a string or
/// key, a number no double can hold, and a duplicate key. A content error
/// (NUL, UTF-8, number, duplicate) names the JSON path where it was found.
///
/// It reads the bytes in place (`parse(_:)` lends it the array's buffer for
/// the one call), so no byte access pays for an array bounds check or a copy.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    /// False only to salvage the id and app of a message already refused:
    /// then NUL, invalid UTF-8 (replaced by U+FFFD), huge numbers and
    /// duplicate keys pass. Syntax and depth stay checked.
    private let strict: Bool
    static let maxDepth = 64

    private init(_ bytes: UnsafeBufferPointer<UInt8>, strict: Bool) {
        self.bytes = bytes
        self.strict = strict
    }

    /// Parses one JSON document from `bytes`.
    static func parse(_ bytes: [UInt8], strict: Bool = true) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = JSONParser(buffer, strict: strict)
            return try parser.parseDocument()
        }
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw error("starts with a UTF-8 byte order mark (EF BB BF)", .byteOrderMark)
        }
        if bytes.count >= 2, (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE) {
            throw error("starts with a UTF-16 byte order mark (intake is UTF-8 JSON)", .byteOrderMark)
        }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected data after the JSON value") }
        return value
    }

    private func error(_ message: String, _ reason: IntakeReason = .notJSON) -> JSONParseError {
        JSONParseError(message: "\(message) at byte \(index)", reason: reason)
    }

    /// A byte as an error message can show it: never a control or non-ASCII
    /// byte itself (a NUL in a reason would break the very row recording it).
    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(JSONParser.describe(bytes[index]))")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let matches = literal.withUTF8Buffer { buffer in
            buffer.elementsEqual(bytes[index..<index + count])
        }
        guard matches else { throw error("invalid literal") }
        index += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > JSONParser.maxDepth { throw error("nesting deeper than \(JSONParser.maxDepth)", .tooDeep) }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        members.reserveCapacity(4)  // grows 4, 8, 16 instead of 1, 2, 4, 8, 16
        var seenKeys: Set<KeyBytes> = []
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let keyStart = index
            let key: String
            do throws(JSONParseError) { key = try parseString() } catch { throw error.inKey() }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value: JSONValue
            // The catch reads the key again from its bytes (`keyStart`) rather
            // than keeping `key`: holding it for the rare error cost a retain per member.
            do throws(JSONParseError) { value = try parseValue() } catch { throw error.inside(key: self.key(at: keyStart)) }
            if strict, JSONParser.isDuplicate(key, in: members, seen: &seenKeys) {
                throw error("duplicate key", .duplicateKey).inside(key: key)
            }
            members.append((key, value))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    /// Objects up to this many members look for a duplicate key by scanning;
    /// wider ones keep a set, so a 256 KB object of 20,000 keys costs
    /// milliseconds, not the second a scan per key (quadratic) took.
    static let scannedMembers = 16

    /// Whether `key` is already among `members` (whose keys are in `seen`
    /// once there are `scannedMembers` or more). Keys are the same when their
    /// bytes are, as RFC 8259 compares names by code points: `é` and `e` +
    /// U+0301 are two keys, never a duplicate, however wide the object.
    private static func isDuplicate(_ key: String, in members: [(key: String, value: JSONValue)], seen: inout Set<KeyBytes>) -> Bool {
        if members.count < scannedMembers { return members.contains { sameBytes($0.key, key) } }
        if seen.isEmpty {
            seen.reserveCapacity(members.count * 2)
            for member in members { seen.insert(KeyBytes(member.key)) }
        }
        return !seen.insert(KeyBytes(key)).inserted
    }

    /// Whether two keys have the same bytes. Equal bytes are equal strings,
    /// so `==` (a length check and a memcmp for ASCII) rules out almost every
    /// pair before the bytes are walked.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a == b && a.utf8.elementsEqual(b.utf8)
    }

    /// An object key compared and hashed by its UTF-8 bytes (`String`'s own
    /// `==` and hash follow canonical equivalence).
    struct KeyBytes: Hashable {
        let key: String
        init(_ key: String) { self.key = key }
        static func == (a: KeyBytes, b: KeyBytes) -> Bool { sameBytes(a.key, b.key) }
        func hash(into hasher: inout Hasher) {
            var key = key
            key.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// The key whose opening quote is at `start` (already parsed once, so valid).
    private func key(at start: Int) -> String {
        var again = self
        again.index = start
        return (try? again.parseString()) ?? "?"
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            do throws(JSONParseError) { items.append(try parseValue()) } catch { throw error.inside(index: items.count) }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. ASCII costs one more comparison per byte; a
        // multi-byte sequence is validated where it stands.
        while index < bytes.count {
            let b = bytes[index]
            // Printable ASCII other than '"' and '\\': one range check, two comparisons.
            if b &- 0x20 < 0x60, b != UInt8(ascii: "\""), b != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw controlCharacter(b) }
            index += try utf8SequenceLength()
        }
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw controlCharacter(b) }
            if b != UInt8(ascii: "\\") {
                let length = b >= 0x80 ? try utf8SequenceLength() : 1
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + length]))
                index += length
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate escape", .invalidUTF8) }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate escape", .invalidUTF8) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("unpaired surrogate escape", .invalidUTF8)
                }
                if scalar == 0, strict { throw error("U+0000 (\\u0000) in a string", .nulCharacter) }
                guard let u = Unicode.Scalar(scalar) else { throw error("invalid unicode escape", .invalidUTF8) }
                out.append(contentsOf: String(Character(u)).utf8)
            default: throw error("invalid escape")
            }
        }
        throw error("unterminated string")
    }

    /// A raw control byte in a string: U+0000 has its own reason, the others are not JSON.
    private func controlCharacter(_ byte: UInt8) -> JSONParseError {
        if byte == 0 {
            return strict ? error("U+0000 in a string", .nulCharacter) : error("control character in string")
        }
        return error("control character \(JSONParser.describe(byte)) in string")
    }

    /// The length of the well-formed UTF-8 sequence (2-4 bytes) that starts at
    /// `index` with a byte >= 0x80 (Unicode 15, table 3-7: no overlong forms,
    /// no surrogates, nothing above U+10FFFF). Lenient parsing takes an
    /// ill-formed byte as one byte (decoding replaces it by U+FFFD).
    private func utf8SequenceLength() throws(JSONParseError) -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the range of the second byte
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: length = 0
        }
        var valid = length > 0 && index + length <= bytes.count
        if valid {
            valid = (low...high).contains(bytes[index + 1])
            var i = 2
            while valid, i < length {
                valid = (0x80...0xBF).contains(bytes[index + i])
                i += 1
            }
        }
        guard valid else {
            if strict { throw error("invalid UTF-8 (byte 0x\(String(lead, radix: 16, uppercase: true)))", .invalidUTF8) }
            return 1
        }
        return length
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in unicode escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw error("invalid number")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw error("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw error("invalid number") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        // The grammar is checked: a number Double cannot give (or gives as
        // infinity) is beyond any double, e.g. 1e400.
        guard let d = Double(text), d.isFinite || !strict else {
            throw error("number \(text.prefix(40)) is beyond the range of a double", .numberOutOfRange)
        }
        return .double(d)
    }
}
