/// Header-name helpers for the send hot path (no lower-cased copies).
enum ProviderHeaders {
    /// ASCII case-insensitive `name == lowercased`, without allocating.
    static func isNamed(_ name: String, _ lowercased: StaticString) -> Bool {
        guard name.utf8.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount)
        return zip(name.utf8, expected).allSatisfy { a, b in
            (a >= UInt8(ascii: "A") && a <= UInt8(ascii: "Z") ? a | 0x20 : a) == b
        }
    }
}
