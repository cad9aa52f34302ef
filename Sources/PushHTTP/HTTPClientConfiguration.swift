import Foundation

/// How an `HTTP2Client` connects: trust, timeouts, connection pool shape, proxy
/// and an optional TLS client certificate.
public struct HTTPClientConfiguration: Sendable {
    /// A PEM CA bundle to trust *instead of* the system store (e.g. the
    /// simulator's generated CA); `nil` trusts the system store.
    public var caBundlePath: String?
    /// Time allowed for TCP + TLS connection setup.
    public var connectTimeout: Duration
    /// Time allowed for a whole request, from submission (including time queued
    /// for a connection or a stream slot) to the last byte of the response.
    public var requestTimeout: Duration
    /// Connections opened per host at most. HTTP/2 multiplexes many streams
    /// over each, so a small number carries hundreds of concurrent requests;
    /// requests beyond what they carry wait in curl's queue.
    public var maxConnectionsPerHost: Int
    /// Streams per connection at most, from the first request on: a new
    /// connection carries one request until the server's first answer (its
    /// SETTINGS frame comes before it), then at most the smaller of this and
    /// the server's MAX_CONCURRENT_STREAMS (which may change mid-connection).
    public var maxConcurrentStreams: Int
    /// An HTTP CONNECT proxy URL, e.g. `http://proxy:3128`.
    public var proxy: String?
    /// A TLS client certificate (APNs certificate-based auth).
    public var clientCertificatePath: String?
    /// The private key for `clientCertificatePath` (may be the same file).
    public var clientKeyPath: String?
    /// `"PEM"` or `"P12"`; `nil` lets curl assume PEM.
    public var clientCertificateType: String?
    /// The passphrase of an encrypted client key or PKCS#12 file (`CURLOPT_KEYPASSWD`).
    public var clientKeyPassword: String?
    /// Whom this client's connections speak for, e.g. `apns-team:ABCDE12345`.
    /// curl shares connections between all requests of one `HTTP2Client`, so a
    /// client is one connection pool: provider clients that must not share
    /// connections (APNs: one team per connection) check this label and each
    /// need a client of their own (see `HTTP2ClientPool`).
    public var connectionIdentity: String?
    /// Curl threads (multi handles) the connections are spread over, at most
    /// one per connection. One thread drives all connections by default; two
    /// let a busy client use a second core (`pushfleet bench send --loop-threads`).
    public var loopThreads: Int = 1
    /// curl's `CURLOPT_VERBOSE` trace on stderr, for debugging only. Defaults
    /// to whether the environment variable `PUSHHTTP_CURL_VERBOSE` is set.
    public var verbose: Bool = ProcessInfo.processInfo.environment["PUSHHTTP_CURL_VERBOSE"] != nil

    /// A configuration with the defaults: system trust store, 10 s connect,
    /// 30 s request, 2 connections per host, 100 streams per connection.
    public init(
        caBundlePath: String? = nil,
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30),
        maxConnectionsPerHost: Int = 2,
        maxConcurrentStreams: Int = 100,
        proxy: String? = nil,
        clientCertificatePath: String? = nil,
        clientKeyPath: String? = nil,
        clientCertificateType: String? = nil
    ) {
        self.caBundlePath = caBundlePath
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxConcurrentStreams = maxConcurrentStreams
        self.proxy = proxy
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
        self.clientCertificateType = clientCertificateType
    }
}

extension Duration {
    /// Whole milliseconds, clamped at zero, for curl's `long` millisecond options.
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow { return Int.max }
        return max(0, Int(clamping: ms.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
