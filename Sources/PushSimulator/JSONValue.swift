/// A parsed JSON value. The simulator parses request bodies with its own small
/// parser (`JSONParser`) instead of Foundation's decoders, to keep the request
/// path cheap and to see exactly what a client sent (types, duplicate keys).
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }

    var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// An integral number (JWT `iat`/`exp`), or nil.
    var integerValue: Int64? {
        guard case .number(let number) = self, number.rounded() == number, abs(number) < 9e15 else { return nil }
        return Int64(number)
    }
}

/// Writes JSON string literals for response bodies.
enum JSONWriter {
    /// `text` as a quoted, escaped JSON string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
