import Logging

/// An HTTP/2 client on one libcurl multi handle, driven by a dedicated thread
/// (`curl_multi_poll` + `curl_multi_wakeup`), never Swift's cooperative pool.
///
/// Requests to one host share at most `maxConnectionsPerHost` connections,
/// each multiplexing up to `maxConcurrentStreams` streams. Failed transfers
/// throw `HTTPError`, whose `statusReceived` tells whether the server answered
/// before the failure (GOAWAY and RST_STREAM surface as transfer errors).
public final class HTTP2Client: Sendable {
    private let engine: CurlEngine

    /// Starts the client's thread.
    /// - Throws: `HTTPError` if libcurl cannot be initialised or configured.
    public init(configuration: HTTPClientConfiguration, logger: Logger) throws {
        engine = try CurlEngine(configuration: configuration, logger: logger)
        engine.start()
    }

    deinit { engine.shutdown() }

    /// Sends `request` and returns the complete response (any status).
    /// - Throws: `HTTPError` for transport failures, shutdown or cancellation.
    public func execute(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = Transfer(request: request)
        let engine = self.engine
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                engine.submit(transfer)
            }
        } onCancel: {
            engine.cancel(transfer)
        }
    }

    /// Fails pending and in-flight requests with `HTTPError.shutdown`, joins
    /// the thread and releases curl's resources. Blocks until the thread has
    /// stopped (at most one poll interval); safe to call more than once.
    public func shutdown() { engine.shutdown() }

    /// The configuration the client was started with.
    public var configuration: HTTPClientConfiguration { engine.configuration }

    /// Counters since the client started.
    public func stats() -> HTTPClientStats { engine.stats() }
}
