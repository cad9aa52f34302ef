/// Which push service a request goes to.
public enum Provider: String, Sendable, Hashable, Codable, CaseIterable {
    case apns
    case fcm
}

/// A provider request as PushCore translated it: everything but the host and
/// the credentials, which the provider clients in `PushProviders` add.
public struct ProviderRequest: Sendable, Equatable {
    /// The provider this request is for.
    public var provider: Provider
    /// Path and query, e.g. `/3/device/<token>` or `/v1/projects/<id>/messages:send`.
    public var path: String
    /// Provider headers in the order they are sent (lower-case names).
    public var headers: [(name: String, value: String)]
    /// The exact bytes of the JSON body.
    public var body: [UInt8]

    public init(provider: Provider, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.provider = provider
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The value of the first header with this (lower-case) name.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.name == name })?.value
    }

    public static func == (lhs: ProviderRequest, rhs: ProviderRequest) -> Bool {
        lhs.provider == rhs.provider && lhs.path == rhs.path && lhs.body == rhs.body
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
