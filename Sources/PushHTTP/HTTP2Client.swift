import Logging
import Synchronization

/// An HTTP/2 client on libcurl multi handles, each driven by a dedicated
/// thread (`curl_multi_poll` + `curl_multi_wakeup`), never Swift's cooperative pool.
///
/// Requests to one host share at most `maxConnectionsPerHost` connections,
/// each multiplexing up to `maxConcurrentStreams` streams. With
/// `loopThreads` > 1 the connections are split over that many multi handles
/// and requests go to them in turn. Failed transfers throw `HTTPError`,
/// whose `statusReceived` tells whether the server answered before the
/// failure (GOAWAY and RST_STREAM surface as transfer errors).
public final class HTTP2Client: Sendable {
    private let engines: [CurlEngine]
    private let next = Atomic<Int>(0)

    /// Starts the client's thread(s).
    /// - Throws: `HTTPError` if libcurl cannot be initialised or configured.
    public init(configuration: HTTPClientConfiguration, logger: Logger) throws {
        let connections = max(1, configuration.maxConnectionsPerHost)
        let count = min(max(1, configuration.loopThreads), connections)
        var engines: [CurlEngine] = []
        for index in 0..<count {
            var part = configuration
            // Connections split as evenly as they go: 5 over 2 threads is 3 + 2.
            part.maxConnectionsPerHost = connections / count + (index < connections % count ? 1 : 0)
            engines.append(try CurlEngine(configuration: part, logger: logger))
        }
        self.engines = engines
        for engine in engines { engine.start() }
    }

    deinit { for engine in engines { engine.shutdown() } }

    /// Sends `request` and returns the complete response (any status).
    /// - Throws: `HTTPError` for transport failures, shutdown or cancellation.
    public func execute(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = Transfer(request: request)
        let engine = engines.count == 1 ? engines[0] : engines[next.add(1, ordering: .relaxed).oldValue % engines.count]
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                transfer.continuation = continuation
                engine.submit(transfer)
            }
        } onCancel: {
            engine.cancel(transfer)
        }
    }

    /// Fails pending and in-flight requests with `HTTPError.shutdown`, joins
    /// the thread(s) and releases curl's resources. Blocks until the threads
    /// have stopped (at most one poll interval); safe to call more than once.
    public func shutdown() { for engine in engines { engine.shutdown() } }

    /// The configuration the client was started with.
    public var configuration: HTTPClientConfiguration {
        var configuration = engines[0].configuration
        configuration.maxConnectionsPerHost = engines.reduce(0) { $0 + $1.configuration.maxConnectionsPerHost }
        return configuration
    }

    /// Counters since the client started (all threads together).
    public func stats() -> HTTPClientStats {
        engines.dropFirst().reduce(engines[0].stats()) { total, engine in
            let stats = engine.stats()
            return HTTPClientStats(
                submitted: total.submitted + stats.submitted, succeeded: total.succeeded + stats.succeeded,
                failed: total.failed + stats.failed, connectionsOpened: total.connectionsOpened + stats.connectionsOpened)
        }
    }

    /// Connection sockets the curl threads know and cork during a perform (tests).
    var trackedSocketCount: Int { engines.reduce(0) { $0 + $1.trackedSocketCount } }

    /// How many times submitters woke a curl thread (tests: far fewer than requests under load).
    var wakeupCount: Int { engines.reduce(0) { $0 + $1.wakeupCount } }
}
