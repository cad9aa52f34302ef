import Foundation

extension WebPushEndpointRules {
    /// The endpoint's origin (`https://host[:port]`, lower-case host, port 443
    /// left out: RFC 6454 §6.1), the VAPID audience (RFC 8292 §2); or why the
    /// URL is no endpoint. Intake (a notification's or a device event's
    /// subscription), translation and sealing all ask this one function.
    ///
    /// An endpoint is an absolute `https` URI (RFC 3986) as a browser
    /// serializes it, so ASCII only:
    ///
    ///     https://HOST[:PORT][/path or ?query]
    ///
    /// - HOST: a name of unreserved, sub-delim or `%XX` characters, or an IP
    ///   literal in brackets (hex digits, `:` and `.`); no userinfo (`@`).
    /// - PORT: 1...65535, no leading zero.
    /// - path and query: unreserved, sub-delim, `:`, `@`, `/`, `?` or `%XX`
    ///   characters; no fragment (`#`), no whitespace or control character.
    ///
    /// The schema's `endpoint` pattern (`schemas/notification.schema.json`,
    /// `$defs/webSubscription`) says the same, so the two agree on every
    /// endpoint.
    public static func origin(of url: String) -> Result<String, EndpointProblem> {
        guard url.utf8.count <= maxBytes else { return .failure(.init("longer than \(maxBytes) bytes")) }
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            return .failure(.init("contains whitespace or a control character"))
        }
        guard url.utf8.allSatisfy({ $0 < 0x80 }) else {
            return .failure(.init("contains a character outside ASCII (a browser's endpoint is ASCII: hosts in punycode, paths %-encoded)"))
        }
        guard url.utf8.prefix(8).map({ $0 | 0x20 }).elementsEqual("https://".utf8.map { $0 | 0x20 }) else {
            return .failure(.init("must start with https://"))
        }
        let bytes = url.utf8.dropFirst(8)
        if let problem = bytes.lazy.compactMap(characterProblem).first { return .failure(.init(problem)) }
        if let problem = percentProblem(bytes) { return .failure(.init(problem)) }

        let authority = bytes.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        let rest = bytes.dropFirst(authority.count)
        if authority.contains(UInt8(ascii: "@")) { return .failure(.init("must not carry userinfo (user@ or user:password@)")) }
        if rest.contains(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
            return .failure(.init("has [ or ] outside an IP-literal host"))
        }
        let host: Substring.UTF8View
        var afterHost: Substring.UTF8View
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.init("has an IP-literal host without its ]")) }
            host = authority[...close]
            let literal = host.dropFirst().dropLast()
            guard !literal.isEmpty, literal.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                return .failure(.init("has an IP-literal host that is not hex digits, : and ."))
            }
            afterHost = authority[authority.index(after: close)...]
        } else {
            host = authority.prefix { $0 != UInt8(ascii: ":") }
            afterHost = authority.dropFirst(host.count)
            if host.contains(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
                return .failure(.init("has [ or ] outside an IP-literal host"))
            }
        }
        guard !host.isEmpty else { return .failure(.init("has no host")) }
        var origin = "https://" + String(decoding: host, as: UTF8.self).lowercased()
        if !afterHost.isEmpty {
            guard afterHost.first == UInt8(ascii: ":") else { return .failure(.init("has text after its IP-literal host")) }
            afterHost = afterHost.dropFirst()
            guard let port = port(afterHost) else {
                return .failure(.init("port \"\(String(decoding: afterHost.prefix(8), as: UTF8.self))\" is not 1-65535 (digits, no leading zero)"))
            }
            if port != 443 { origin += ":\(port)" }
        }
        return .success(origin)
    }

    /// Why `byte` cannot stand in an endpoint after `https://`: RFC 3986's
    /// unreserved, sub-delim and gen-delim characters and `%` may; `#` starts
    /// a fragment; anything else must be %-encoded.
    private static func characterProblem(_ byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return nil
        case UInt8(ascii: "#"):
            return "must not have a fragment (#)"
        default:
            if Array("-._~!$&'()*+,;=:@/?[]%".utf8).contains(byte) { return nil }
            return "contains \"\(Character(Unicode.Scalar(byte)))\", which a URL carries only %-encoded"
        }
    }

    /// Every `%` must start a `%XX` escape.
    private static func percentProblem(_ bytes: Substring.UTF8View) -> String? {
        var i = bytes.startIndex
        while let percent = bytes[i...].firstIndex(of: UInt8(ascii: "%")) {
            let escape = bytes[bytes.index(after: percent)...].prefix(2)
            guard escape.count == 2, escape.allSatisfy(isHexDigit) else { return "has a % that is not followed by two hex digits" }
            i = escape.endIndex
        }
        return nil
    }

    /// 1...65535 written without a leading zero, or nil.
    private static func port(_ digits: Substring.UTF8View) -> Int? {
        guard (1...5).contains(digits.count), digits.first != UInt8(ascii: "0"),
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return value <= 65535 ? value : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
