import Foundation

extension JSONValue {
    /// The members when this is an object.
    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The number as a Double when this is `.int` or `.double`.
    public var numberValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// Deep merge: where both are objects, `override`'s members replace
    /// `self`'s in place (recursively) and new keys are appended; otherwise
    /// `override` wins. Key order stays deterministic.
    public func merged(with override: JSONValue) -> JSONValue {
        guard case .object(let base) = self, case .object(let over) = override else { return override }
        return .object(JSONValue.merge(base, over))
    }

    /// `merged(with:)` on member lists.
    public static func merge(_ base: [(key: String, value: JSONValue)], _ override: [(key: String, value: JSONValue)])
        -> [(key: String, value: JSONValue)]
    {
        guard !override.isEmpty else { return base }
        var result = base
        for member in override {
            if let i = result.firstIndex(where: { $0.key == member.key }) {
                result[i].value = result[i].value.merged(with: member.value)
            } else {
                result.append(member)
            }
        }
        return result
    }
}
