import PushCore

/// Small read helpers over PushCore's `JSONValue` for the checks the rules make
/// (JWT claims, APNs payloads, FCM messages). Parsing and encoding are PushCore's.
extension JSONValue {
    /// The members when this is an object, in document order.
    var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// An integral number (JWT `iat`/`exp`), or nil.
    var integerValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let number):
            guard number.rounded() == number, abs(number) < 9e15 else { return nil }
            return Int64(number)
        default: return nil
        }
    }
}

/// Writes JSON string literals for response bodies, with PushCore's encoder.
enum JSONWriter {
    /// `text` as a quoted, escaped JSON string.
    static func quoted(_ text: String) -> String {
        String(decoding: JSONValue.string(text).encoded(), as: UTF8.self)
    }
}
