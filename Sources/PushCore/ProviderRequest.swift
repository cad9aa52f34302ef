/// Which push service a request goes to.
public enum Provider: String, Sendable, Hashable, Codable, CaseIterable {
    case apns
    case fcm
    /// Web Push (RFC 8030) to the subscription's endpoint, whatever its host.
    case webpush
    /// Huawei Push Kit.
    case hms
}

/// A provider request as PushCore translated it: everything but the host and
/// the credentials, which the provider clients in `PushProviders` add.
public struct ProviderRequest: Sendable, Equatable {
    /// The provider this request is for.
    public var provider: Provider
    /// Path and query, e.g. `/3/device/<token>` or `/v1/projects/<id>/messages:send`;
    /// for Web Push the whole endpoint URL.
    public var path: String
    /// Provider headers in the order they are sent (lower-case names).
    public var headers: [(name: String, value: String)]
    /// The exact bytes of the JSON body. For Web Push, the plaintext the
    /// service worker receives, until the client encrypts it for `webKeys`.
    public var body: [UInt8]
    /// Web Push: the subscription keys the body is encrypted for at send.
    public var webKeys: WebPushKeys?

    public init(provider: Provider, path: String, headers: [(name: String, value: String)], body: [UInt8],
                webKeys: WebPushKeys? = nil) {
        self.provider = provider
        self.path = path
        self.headers = headers
        self.body = body
        self.webKeys = webKeys
    }

    /// The value of the first header with this (lower-case) name.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.name == name })?.value
    }

    public static func == (lhs: ProviderRequest, rhs: ProviderRequest) -> Bool {
        lhs.provider == rhs.provider && lhs.path == rhs.path && lhs.body == rhs.body && lhs.webKeys == rhs.webKeys
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// What a provider answered: an HTTP status, headers and body.
public struct ProviderResponse: Sendable, Equatable {
    public var status: Int
    /// Response headers with lower-case names.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first(where: { $0.name == lower })?.value
    }

    public static func == (lhs: ProviderResponse, rhs: ProviderResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}
