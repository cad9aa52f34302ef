import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PushCore
import ServiceLifecycle

/// The operators' HTTP/1.1 listener: `GET /metrics` (Prometheus text),
/// `GET /health/live` and `GET /health/ready` (200 `ok`, or 503 with a short
/// JSON body naming what is wrong); 404 for other paths, 405 for other
/// methods. A `Service`: it runs until graceful shutdown or cancellation,
/// then closes its listening socket. Port 0 binds a free port; `boundPort()`
/// tells which.
public final class ObservabilityServer: Service, Sendable {
    private let host: String
    private let port: Int
    private let routes: ObservabilityRoutes
    private let group: any EventLoopGroup
    private let logger: Logger
    private let binding = Locked(BindState.pending([]))

    private enum BindState {
        case pending([CheckedContinuation<Int, any Error>])
        case bound(Int)
        case failed(any Error)
    }

    /// - Parameters:
    ///   - host: address to listen on (`0.0.0.0` for all IPv4 interfaces).
    ///   - port: port to listen on; 0 picks a free one.
    ///   - exposition: the registry rendered at `/metrics`.
    ///   - health: the state behind the health endpoints.
    ///   - beforeScrape: runs before each `/metrics` render, e.g. to
    ///     `WorkerMetrics.export(worker.stats)`; keep it quick (it runs on
    ///     the event loop).
    public init(host: String, port: Int, exposition: PrometheusExposition, health: HealthState,
                logger: Logger, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                beforeScrape: (@Sendable () -> Void)? = nil) {
        self.host = host
        self.port = port
        self.routes = ObservabilityRoutes(exposition: exposition, health: health, beforeScrape: beforeScrape)
        self.group = group
        self.logger = logger
    }

    /// The port the listener got, once `run()` has bound it; throws if binding failed.
    public func boundPort() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Int, any Error>? = binding.withLock { state in
                switch state {
                case .pending(var waiters):
                    waiters.append(continuation)
                    state = .pending(waiters)
                    return nil
                case .bound(let port): return .success(port)
                case .failed(let error): return .failure(error)
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    public func run() async throws {
        let routes = self.routes
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 64)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(ObservabilityHTTPHandler(routes: routes))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            resolve(.failure(error))
            throw error
        }
        let actualPort = channel.localAddress?.port ?? port
        resolve(.success(actualPort))
        logger.info("observability listener started", metadata: [
            "http.host": "\(host)", "http.port": "\(actualPort)",
        ])
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await channel.closeFuture.get()
            } onGracefulShutdown: {
                channel.close(promise: nil)
            }
        } onCancel: {
            channel.close(promise: nil)
        }
        logger.info("observability listener stopped", metadata: ["http.port": "\(actualPort)"])
    }

    private func resolve(_ result: Result<Int, any Error>) {
        let waiters: [CheckedContinuation<Int, any Error>] = binding.withLock { state in
            guard case .pending(let waiters) = state else { return [] }
            switch result {
            case .success(let port): state = .bound(port)
            case .failure(let error): state = .failed(error)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
