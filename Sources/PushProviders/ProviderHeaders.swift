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

    typealias Header = (name: String, value: String)

    /// Whether an OAuth access token can follow `Bearer ` in a header: 1 to
    /// 8,192 visible ASCII characters (RFC 6749's VSCHAR less the space).
    /// A token server's CR or LF would otherwise start a header of its choosing.
    static func isBearerToken(_ token: String) -> Bool {
        (1...8_192).contains(token.utf8.count) && token.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    static let notABearerToken =
        "token endpoint answered an access_token that is not 1-8192 visible ASCII characters (a space, control or non-ASCII byte)"

    /// `headers` without those named `dropped` or `alsoDropped`
    /// (case-insensitive), then `added` and `alsoAdded`, in one allocation:
    /// how a client puts its own authorization (and content type) on a
    /// translated request. Fixed arity, so the hot path builds no arrays of
    /// names or additions.
    static func replacing(in headers: [Header], dropping dropped: StaticString, _ alsoDropped: StaticString? = nil,
                          adding added: Header?, _ alsoAdded: Header? = nil) -> [Header] {
        var out: [Header] = []
        out.reserveCapacity(headers.count + 2)
        for header in headers where !isNamed(header.name, dropped) && !(alsoDropped.map { isNamed(header.name, $0) } ?? false) {
            out.append(header)
        }
        if let added { out.append(added) }
        if let alsoAdded { out.append(alsoAdded) }
        return out
    }
}
