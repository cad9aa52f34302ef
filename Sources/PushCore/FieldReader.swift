import Foundation

/// Reads typed fields from a JSON object, collecting issues instead of throwing.
struct FieldReader {
    let json: JSONValue
    let prefix: String
    var issues: [ValidationIssue] = []

    init(json: JSONValue, prefix: String = "") {
        self.json = json
        self.prefix = prefix
    }

    /// A reader for the object at `field`, whose issues carry `field.` as prefix.
    func nested(_ field: String, _ value: JSONValue) -> FieldReader {
        FieldReader(json: value, prefix: "\(prefix)\(field).")
    }

    mutating func fail(_ field: String, _ reason: String) {
        issues.append(ValidationIssue(path: prefix + field, reason: reason))
    }

    func has(_ field: String) -> Bool {
        if let v = json[field], v != .null { return true }
        return false
    }

    mutating func value(_ field: String, required: Bool) -> JSONValue? {
        guard let v = json[field], v != .null else {
            if required { fail(field, "is required") }
            return nil
        }
        return v
    }

    mutating func string(_ field: String, required: Bool = false) -> String? {
        guard let v = value(field, required: required) else { return nil }
        guard case .string(let s) = v else { fail(field, "must be a string"); return nil }
        return s
    }

    /// A string that must not be empty when present.
    mutating func nonEmptyString(_ field: String, required: Bool = false, maxBytes: Int? = nil) -> String? {
        guard let s = string(field, required: required) else { return nil }
        if s.isEmpty { fail(field, "must not be empty"); return nil }
        if let maxBytes, s.utf8.count > maxBytes { fail(field, "longer than \(maxBytes) bytes"); return nil }
        return s
    }

    mutating func int(_ field: String, required: Bool = false) -> Int? {
        guard let v = value(field, required: required) else { return nil }
        switch v {
        case .int(let i):
            guard let n = Int(exactly: i) else { fail(field, "is out of range"); return nil }
            return n
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: return Int(d)
        default: fail(field, "must be an integer"); return nil
        }
    }

    mutating func double(_ field: String, in range: ClosedRange<Double>) -> Double? {
        guard let v = value(field, required: false) else { return nil }
        guard let d = v.numberValue, d.isFinite else { fail(field, "must be a number"); return nil }
        guard range.contains(d) else { fail(field, "must be between \(range.lowerBound) and \(range.upperBound) (got \(d))"); return nil }
        return d
    }

    mutating func bool(_ field: String) -> Bool? {
        guard let v = value(field, required: false) else { return nil }
        guard case .bool(let b) = v else { fail(field, "must be true or false"); return nil }
        return b
    }

    mutating func object(_ field: String) -> JSONValue? {
        guard let v = value(field, required: false) else { return nil }
        guard case .object = v else { fail(field, "must be an object"); return nil }
        return v
    }

    mutating func stringArray(_ field: String) -> [String]? {
        guard let v = value(field, required: false) else { return nil }
        guard case .array(let items) = v else { fail(field, "must be an array of strings"); return nil }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { fail("\(field)[\(i)]", "must be a string"); return nil }
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
        guard let u = UUID(uuidString: s) else { fail(field, "is not a UUID (\"\(s.prefix(40))\")"); return nil }
        return u
    }

    mutating func date(_ field: String, required: Bool) -> Date? {
        guard let s = string(field, required: required) else { return nil }
        guard let d = Timestamps.parse(s) else { fail(field, "is not an RFC 3339 timestamp (\"\(s.prefix(40))\")"); return nil }
        return d
    }

    /// An `http`/`https` URL.
    mutating func url(_ field: String) -> String? {
        guard let s = string(field) else { return nil }
        guard let url = URL(string: s), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              url.host != nil
        else { fail(field, "must be an http(s) URL"); return nil }
        return s
    }

    mutating func rejectUnknown(allowed: Set<String>) {
        guard case .object(let members) = json else { return }
        for member in members where !allowed.contains(member.key) {
            fail(member.key, "unknown field")
        }
    }
}
