import Foundation

/// A push subscription's endpoint (RFC 8030 §4): an https URL with a host and
/// no userinfo or fragment. Its origin is the VAPID audience (RFC 8292 §2).
public struct WebPushEndpoint: Sendable, Equatable {
    /// The endpoint as given.
    public let url: String
    /// `https://host[:port]`: lower-case host, default port 443 left out (RFC 6454 §6.1).
    public let origin: String

    /// Validates `url`; throws `.invalidEndpoint` saying what is wrong.
    public init(_ url: String) throws(WebPushError) {
        func fail(_ why: String) -> WebPushError {
            WebPushError.invalid(.invalidEndpoint, field: "endpoint", why)
        }
        guard url.utf8.count <= 2048 else { throw fail("longer than 2048 bytes") }
        guard !url.contains(where: { $0.isWhitespace }) else { throw fail("contains whitespace") }
        guard let components = URLComponents(string: url) else { throw fail("not a URL") }
        guard components.scheme?.lowercased() == "https" else { throw fail("must use https") }
        guard var host = components.host, !host.isEmpty else { throw fail("has no host") }
        guard components.user == nil, components.password == nil else { throw fail("must not carry userinfo") }
        guard components.fragment == nil else { throw fail("must not have a fragment") }
        host = host.lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }  // IPv6 literal
        var origin = "https://\(host)"
        if let port = components.port {
            guard (1...65535).contains(port) else { throw fail("port \(port) out of range") }
            if port != 443 { origin += ":\(port)" }
        }
        self.url = url
        self.origin = origin
    }
}
