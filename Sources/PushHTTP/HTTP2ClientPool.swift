import Foundation
import Logging

/// One `HTTP2Client` (one curl multi handle, one set of connections) per key.
///
/// curl shares a connection between every request of a client that goes to
/// the same host, so credentials bound to a connection need a client each:
/// APNs allows one team per connection, and a TLS client certificate belongs
/// to its connection. Key the pool by who the connections speak for, e.g.
/// `apns|team:ABCDE12345` or `apns|cert:/etc/pushfleet/secrets/app.p12`.
public final class HTTP2ClientPool: @unchecked Sendable {
    // @unchecked Sendable: `byKey` is only touched with `clients` locked.
    private let base: HTTPClientConfiguration
    private let logger: Logger
    private let clients = NSLock()
    private var byKey: [String: HTTP2Client] = [:]

    /// - Parameter base: the settings every client starts from.
    public init(base: HTTPClientConfiguration, logger: Logger) {
        self.base = base
        self.logger = logger
    }

    /// The client for `key`, started on first use with `base` changed by `configure`
    /// (which only runs then) and `connectionIdentity = key`.
    public func client(
        for key: String, configure: (inout HTTPClientConfiguration) -> Void = { _ in }
    ) throws -> HTTP2Client {
        clients.lock()
        defer { clients.unlock() }
        if let existing = byKey[key] { return existing }
        var configuration = base
        configure(&configuration)
        configuration.connectionIdentity = key
        var logger = self.logger
        logger[metadataKey: "http.pool"] = "\(key)"
        let client = try HTTP2Client(configuration: configuration, logger: logger)
        byKey[key] = client
        return client
    }

    /// Counters per key.
    public func stats() -> [String: HTTPClientStats] {
        clients.lock()
        defer { clients.unlock() }
        return byKey.mapValues { $0.stats() }
    }

    /// Shuts every client down.
    public func shutdown() {
        clients.lock()
        let all = Array(byKey.values)
        clients.unlock()
        for client in all { client.shutdown() }
    }
}
