/// A strict RFC 8259 parser over UTF-8 bytes, with a nesting limit so hostile
/// input cannot exhaust the stack.
struct JSONParser {
    struct Failure: Error, Sendable {
        let offset: Int
        let message: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth = 64

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one complete JSON document.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("trailing characters") }
        return value
    }

    /// Parses a document that must be an object, also returning the byte
    /// length of each top-level member's value (FCM's message size limit).
    static func parseTopLevelObject(
        _ bytes: [UInt8]
    ) throws(Failure) -> (members: [String: JSONValue], sizes: [String: Int]) {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { throw parser.failure("expected an object") }
        var sizes: [String: Int] = [:]
        let members = try parser.parseObject(depth: 0) { key, range in sizes[key] = range.count }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("trailing characters") }
        return (members, sizes)
    }

    private func failure(_ message: String) -> Failure {
        Failure(offset: index, message: message)
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw failure("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard depth < maxDepth else { throw failure("nesting too deep") }
        guard let byte = peek() else { throw failure("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth, onMember: nil))
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        default: return .number(try parseNumber())
        }
    }

    private mutating func parseLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("bad literal") }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw failure("bad literal") }
        index += count
    }

    private mutating func parseObject(
        depth: Int, onMember: ((String, Range<Int>) -> Void)?
    ) throws(Failure) -> [String: JSONValue] {
        try expect(UInt8(ascii: "{"))
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let start = index
            object[key] = try parseValue(depth: depth + 1)
            onMember?(key, start..<index)
            skipWhitespace()
            guard let byte = peek() else { throw failure("unterminated object") }
            index += 1
            if byte == UInt8(ascii: "}") { return object }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        try expect(UInt8(ascii: "["))
        var array: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard let byte = peek() else { throw failure("unterminated array") }
            index += 1
            if byte == UInt8(ascii: "]") { return .array(array) }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or ']'") }
        }
    }

    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        guard index > digitsStart else { throw failure("bad number") }
        if bytes[digitsStart] == UInt8(ascii: "0"), index - digitsStart > 1 { throw failure("leading zero") }
        if peek() == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            guard index > fractionStart else { throw failure("bad fraction") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            guard index > exponentStart else { throw failure("bad exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else { throw failure("bad number") }
        return value
    }

    private mutating func parseString() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // Fast path: no escapes.
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("control character in string") }
            index += 1
        }
        guard let stop = peek() else { throw failure("unterminated string") }
        var scalars = String(decoding: bytes[start..<index], as: UTF8.self)
        if stop == UInt8(ascii: "\"") {
            index += 1
            return scalars
        }
        var pending: [UInt8] = []
        while true {
            guard let byte = peek() else { throw failure("unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                scalars += String(decoding: pending, as: UTF8.self)
                return scalars
            case UInt8(ascii: "\\"):
                guard let escaped = peek() else { throw failure("unterminated escape") }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): pending.append(escaped)
                case UInt8(ascii: "b"): pending.append(0x08)
                case UInt8(ascii: "f"): pending.append(0x0C)
                case UInt8(ascii: "n"): pending.append(0x0A)
                case UInt8(ascii: "r"): pending.append(0x0D)
                case UInt8(ascii: "t"): pending.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    pending.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw failure("bad escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("control character in string") }
                pending.append(byte)
            }
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("bad \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("bad \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws(Failure) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw failure("lone surrogate") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            else { throw failure("bad surrogate pair") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw failure("lone surrogate") }
        return scalar
    }
}
