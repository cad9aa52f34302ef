import Foundation

/// Reads typed fields from a JSON object, collecting issues instead of throwing.
///
/// Every intake message goes through here, so the hot path stays cheap: the
/// object's members are scanned in place (no per-field copies of the tree),
/// and the path prefix of a nested reader is only spelled out when an issue
/// needs it.
struct FieldReader {
    /// The object's members; empty when the value read is not an object.
    private let members: [(key: String, value: JSONValue)]
    /// Bit n is set when some key is n bytes long (63: 63 or longer): most
    /// absent fields are known absent without scanning the members.
    private let keyLengths: UInt64
    /// The parent's prefix, this reader's field and array index: the prefix
    /// is `"\(parentPrefix)\(field)[\(index)]."`.
    private let parentPrefix: String
    private let field: String?
    private let index: Int?
    var issues: [ValidationIssue] = []

    init(json: JSONValue, prefix: String = "") {
        self.init(json: json, parentPrefix: prefix, field: nil, index: nil)
    }

    private init(json: JSONValue, parentPrefix: String, field: String?, index: Int?) {
        if case .object(let members) = json { self.members = members } else { self.members = [] }
        var keyLengths: UInt64 = 0
        for i in members.indices { keyLengths |= FieldReader.lengthBit(members[i].key) }
        self.keyLengths = keyLengths
        self.parentPrefix = parentPrefix
        self.field = field
        self.index = index
    }

    /// The path prefix of this reader's issues, e.g. `alert.` or `recipients[2].`.
    var prefix: String {
        guard let field else { return parentPrefix }
        guard let index else { return parentPrefix + field + "." }
        return "\(parentPrefix)\(field)[\(index)]."
    }

    /// A reader for the object at `field`, whose issues carry `field.` as prefix.
    func nested(_ field: String, _ value: JSONValue) -> FieldReader {
        FieldReader(json: value, parentPrefix: prefix, field: field, index: nil)
    }

    /// A reader for the object at `field[index]`, whose issues carry `field[index].` as prefix.
    func nested(_ field: String, index: Int, _ value: JSONValue) -> FieldReader {
        FieldReader(json: value, parentPrefix: prefix, field: field, index: index)
    }

    mutating func fail(_ field: String, _ reason: String, _ code: IntakeReason = .invalidValue) {
        issues.append(ValidationIssue(path: prefix + field, reason: reason, code: code))
    }

    /// Keys are compared by length first: most keys differ in length, which
    /// is far cheaper to see than a full string comparison.
    static func sameKey(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a == b
    }

    private static func lengthBit(_ key: String) -> UInt64 {
        1 << UInt64(min(key.utf8.count, 63))
    }

    /// The member `field`, null or not.
    private func member(_ field: String) -> JSONValue? {
        guard keyLengths & FieldReader.lengthBit(field) != 0 else { return nil }
        // By index: no copy (retain and release) of every member passed over.
        for i in members.indices where FieldReader.sameKey(members[i].key, field) { return members[i].value }
        return nil
    }

    func has(_ field: String) -> Bool {
        guard let v = member(field) else { return false }
        if case .null = v { return false }
        return true
    }

    mutating func value(_ field: String, required: Bool) -> JSONValue? {
        if let v = member(field) {
            if case .null = v {} else { return v }
        }
        if required { fail(field, "is required", .missingField) }
        return nil
    }

    mutating func string(_ field: String, required: Bool = false) -> String? {
        guard let v = value(field, required: required) else { return nil }
        guard case .string(let s) = v else { fail(field, "must be a string", .wrongType); return nil }
        return s
    }

    /// A string that must not be empty when present.
    mutating func nonEmptyString(_ field: String, required: Bool = false, maxBytes: Int? = nil) -> String? {
        guard let s = string(field, required: required) else { return nil }
        if s.isEmpty { fail(field, "must not be empty"); return nil }
        if let maxBytes, s.utf8.count > maxBytes { fail(field, "longer than \(maxBytes) bytes"); return nil }
        return s
    }

    /// `nonEmptyString` for text sent as an HTTP/2 header value: no control
    /// character (U+0000–U+001F, U+007F), since a CR or LF would end the line
    /// and start another header of the producer's choosing.
    mutating func headerText(_ field: String, maxBytes: Int) -> String? {
        guard let s = nonEmptyString(field, maxBytes: maxBytes) else { return nil }
        guard Self.isHeaderSafe(s) else { fail(field, Self.controlCharacterReason); return nil }
        return s
    }

    /// `campaign`: a string `Campaign.problem` finds nothing wrong with
    /// (`invalid_campaign` otherwise; `wrong_type` when not a string).
    mutating func campaign() -> String? {
        guard let s = string("campaign") else { return nil }
        if let problem = Campaign.problem(s) { fail("campaign", problem, .invalidCampaign); return nil }
        return s
    }

    static let controlCharacterReason = "contains a control character (U+0000-U+001F or U+007F); it is sent as an HTTP/2 header value"

    /// No byte below 0x20 and no 0x7F (UTF-8 never uses those bytes inside a multi-byte character).
    static func isHeaderSafe(_ s: String) -> Bool {
        s.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }

    /// An integer; a double is taken when it is integral and below 1e15
    /// (exact in a double), so `3.0` reads as 3 and nothing converts with a trap.
    mutating func int(_ field: String, required: Bool = false) -> Int? {
        guard let v = value(field, required: required) else { return nil }
        switch v {
        case .int(let i):
            guard let n = Int(exactly: i) else { fail(field, "is out of range", .numberOutOfRange); return nil }
            return n
        case .double(let d) where d.isFinite && d == d.rounded():
            guard abs(d) < 1e15, let n = Int(exactly: d) else { fail(field, "is out of range", .numberOutOfRange); return nil }
            return n
        default: fail(field, "must be an integer", .wrongType); return nil
        }
    }

    /// An integer within `range` (`number_out_of_range` outside it).
    mutating func int(_ field: String, required: Bool = false, in range: ClosedRange<Int>) -> Int? {
        guard let n = int(field, required: required) else { return nil }
        guard range.contains(n) else {
            fail(field, "must be between \(range.lowerBound) and \(range.upperBound) (got \(n))", .numberOutOfRange)
            return nil
        }
        return n
    }

    mutating func double(_ field: String, in range: ClosedRange<Double>) -> Double? {
        guard let v = value(field, required: false) else { return nil }
        guard let d = v.numberValue else { fail(field, "must be a number", .wrongType); return nil }
        guard d.isFinite, range.contains(d) else {
            fail(field, "must be between \(range.lowerBound) and \(range.upperBound) (got \(d))", .numberOutOfRange)
            return nil
        }
        return d
    }

    mutating func bool(_ field: String) -> Bool? {
        guard let v = value(field, required: false) else { return nil }
        guard case .bool(let b) = v else { fail(field, "must be true or false", .wrongType); return nil }
        return b
    }

    mutating func object(_ field: String) -> JSONValue? {
        guard let v = value(field, required: false) else { return nil }
        guard case .object = v else { fail(field, "must be an object", .wrongType); return nil }
        return v
    }

    mutating func stringArray(_ field: String) -> [String]? {
        guard let v = value(field, required: false) else { return nil }
        guard case .array(let items) = v else { fail(field, "must be an array of strings", .wrongType); return nil }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { fail("\(field)[\(i)]", "must be a string", .wrongType); return nil }
            result.append(s)
        }
        return result
    }

    mutating func oneOf<E: RawRepresentable & CaseIterable>(_ field: String, _: E.Type) -> E? where E.RawValue == String {
        guard let raw = string(field) else { return nil }
        guard let e = E(rawValue: raw) else {
            fail(field, "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(raw.prefix(40))\")")
            return nil
        }
        return e
    }

    mutating func uuid(_ field: String, required: Bool) -> UUID? {
        guard let s = string(field, required: required) else { return nil }
        guard let u = FieldReader.parseUUID(s) else { fail(field, "is not a UUID (\"\(s.prefix(40))\")"); return nil }
        return u
    }

    mutating func date(_ field: String, required: Bool) -> Date? {
        guard let s = string(field, required: required) else { return nil }
        guard let d = Timestamps.parse(s) else {
            fail(field, "is not an RFC 3339 timestamp (\"\(s.prefix(40))\")", .invalidTimestamp)
            return nil
        }
        return d
    }

    /// An `http`/`https` URL, by the schema's `url` pattern (`FieldReader.isHTTPURL`).
    mutating func url(_ field: String) -> String? {
        guard let s = string(field) else { return nil }
        guard FieldReader.isHTTPURL(s) else {
            fail(field, "must be an http(s) URL: http:// or https://, a non-empty host, no spaces or control characters")
            return nil
        }
        return s
    }

    /// Reports every member not named in `allowed` (a short list, scanned:
    /// cheaper than hashing every key of every message into a set).
    mutating func rejectUnknown(allowed: [String]) {
        for member in members where !allowed.contains(where: { FieldReader.sameKey($0, member.key) }) {
            fail(member.key, "unknown field", .unknownField)
        }
    }
}

extension FieldReader {
    /// The intake schema's `url` pattern, byte for byte:
    /// `^[Hh][Tt][Tt][Pp][Ss]?://[^\x00-\x20\x7F/?#]+(?:[/?#][^\x00-\x20\x7F]*)?$`:
    /// the scheme in any case, a host part of one or more bytes up to the first
    /// `/`, `?` or `#`, and no space, control character or DEL anywhere.
    /// (Foundation's `URL(string:)` took `https://` without a host on some
    /// platforms and refused others the schema takes.)
    static func isHTTPURL(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { b in
            func lower(_ byte: UInt8) -> UInt8 { byte | 0x20 }
            guard b.count >= 7, lower(b[0]) == UInt8(ascii: "h"), lower(b[1]) == UInt8(ascii: "t"),
                  lower(b[2]) == UInt8(ascii: "t"), lower(b[3]) == UInt8(ascii: "p") else { return false }
            var i = 4
            if lower(b[i]) == UInt8(ascii: "s") { i += 1 }
            guard i + 3 <= b.count, b[i] == UInt8(ascii: ":"), b[i + 1] == UInt8(ascii: "/"), b[i + 2] == UInt8(ascii: "/")
            else { return false }
            i += 3
            let hostStart = i
            while i < b.count, b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: "?"), b[i] != UInt8(ascii: "#") {
                if b[i] <= 0x20 || b[i] == 0x7F { return false }
                i += 1
            }
            guard i > hostStart else { return false }
            while i < b.count {
                if b[i] <= 0x20 || b[i] == 0x7F { return false }
                i += 1
            }
            return true
        }
    }

    /// `UUID(uuidString:)`, without its C `sscanf` for the canonical form
    /// (`8-4-4-4-12` hexadecimal digits, either case), which every producer
    /// writes; anything else still goes to Foundation, so exactly the same
    /// strings are accepted.
    static func parseUUID(_ string: String) -> UUID? {
        var string = string
        let parsed: uuid_t? = string.withUTF8 { utf8 in
            guard utf8.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let complete = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
                var i = 0
                for byteIndex in 0..<16 {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        guard utf8[i] == UInt8(ascii: "-") else { return false }
                        i += 1
                    }
                    guard let high = hexDigit(utf8[i]), let low = hexDigit(utf8[i + 1]) else { return false }
                    out[byteIndex] = high << 4 | low
                    i += 2
                }
                return true
            }
            return complete ? bytes : nil
        }
        if let parsed { return UUID(uuid: parsed) }
        return UUID(uuidString: string)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
