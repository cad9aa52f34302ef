/// One HTTP/2 request as the rules see it: no NIO types, so the rules can be
/// unit-tested without sockets.
public struct SimulatorRequest: Sendable {
    /// `:method`, e.g. `POST`.
    public var method: String
    /// `:path`, including any query.
    public var path: String
    /// Regular headers, names lower-case, in arrival order (duplicates kept).
    public var headers: [(name: String, value: String)]
    /// The request body.
    public var body: [UInt8]
    /// The connection's TLS client certificate, when the simulator asks for one.
    public var clientCertificate: SimulatorClientCertificate?

    public init(
        method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        clientCertificate: SimulatorClientCertificate? = nil
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.clientCertificate = clientCertificate
    }

    /// The first header with this lower-case name.
    public func header(_ name: String) -> String? {
        for header in headers where header.name == name { return header.value }
        return nil
    }

    /// How often a header with this lower-case name occurs.
    func count(of name: String) -> Int {
        headers.reduce(0) { $0 + ($1.name == name ? 1 : 0) }
    }
}

/// The answer to a `SimulatorRequest`, plus what the stats record about it.
public struct SimulatorResponse: Sendable {
    /// `:status`.
    public var status: Int
    /// Response headers, names lower-case.
    public var headers: [(name: String, value: String)]
    /// The body (empty for APNs success).
    public var body: [UInt8]
    /// `apns`, `fcm` or `oauth` (or `other` for paths no provider owns).
    public var provider: String
    /// Apple's `reason`, Google's `status`/`errorCode` or OAuth's `error`; `OK` on success.
    public var reason: String

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8], provider: String, reason: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.provider = provider
        self.reason = reason
    }

    /// The first header with this lower-case name.
    public func header(_ name: String) -> String? {
        for header in headers where header.name == name { return header.value }
        return nil
    }

    /// The body as text (for tests and logs).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
