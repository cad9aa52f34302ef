import Foundation
import PushCore

/// A push subscription's endpoint (RFC 8030 §4): an https URL with a host and
/// no userinfo or fragment. Its origin is the VAPID audience (RFC 8292 §2).
public struct WebPushEndpoint: Sendable, Equatable {
    /// The endpoint as given.
    public let url: String
    /// `https://host[:port]`: lower-case host, default port 443 left out (RFC 6454 §6.1).
    public let origin: String

    /// The origin's host: lower-case, an IPv6 literal in brackets, no port.
    public var host: String {
        let rest = origin.dropFirst("https://".count)
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { return String(rest[...close]) }
        return String(rest.split(separator: ":", maxSplits: 1).first ?? rest)
    }

    /// Validates `url` (`WebPushEndpointRules`, as intake does); throws `.invalidEndpoint` saying what is wrong.
    public init(_ url: String) throws(WebPushError) {
        switch WebPushEndpointRules.origin(of: url) {
        case .failure(let problem):
            throw WebPushError.invalid(.invalidEndpoint, field: "endpoint", problem.reason)
        case .success(let origin):
            self.url = url
            self.origin = origin
        }
    }
}
