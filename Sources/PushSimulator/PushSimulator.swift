import PushCore
import Foundation
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An APNs, FCM, Web Push and Huawei Push Kit simulator with Google's and
/// Huawei's OAuth token endpoints: one TLS server speaking HTTP/2 (ALPN `h2`,
/// many concurrent streams per connection) that answers as Apple, Google,
/// RFC 8030/8291/8292 and Huawei document, so workers, tests, the demo and
/// the benchmark need no real provider and no secret.
public final class PushSimulator: Sendable {
    private struct Running: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
        let port: Int
        let caCertificatePEM: String
    }

    private let configuration: SimulatorConfiguration
    private let logger: Logger
    /// nil when the configuration's keys do not parse; `start()` then throws `configurationError`.
    private let rules: SimulatorRules?
    private let configurationError: (any Error)?
    private let running = Locked<Running?>(nil)

    /// Prepares a simulator; nothing is bound until `start()`.
    /// A configuration error (e.g. a key PEM that does not parse) is thrown by `start()`.
    public init(configuration: SimulatorConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        do {
            self.rules = try SimulatorRules(configuration: configuration)
            self.configurationError = nil
        } catch {
            self.rules = nil
            self.configurationError = error
        }
    }

    /// Makes or loads the TLS identity and binds; afterwards `port` is the real port.
    public func start() async throws {
        guard let rules else { throw configurationError ?? SimulatorError.notStarted() }
        try configuration.validate()
        guard running.withLock({ $0 == nil }) else { return }
        let tls = try TLSMaterial.make(for: configuration.tls)
        var tlsConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: tls.certificateChain.map { .certificate($0) }, privateKey: .privateKey(tls.privateKey))
        tlsConfiguration.applicationProtocols = ["h2"]
        let clientAuthority = try configuration.apnsClientCertificateCAPEM.map { try ClientCertificateAuthority(pem: $0) }
        if let pem = configuration.apnsClientCertificateCAPEM {
            // Ask for a client certificate without requiring one (token auth keeps working);
            // the verdict is made per connection and answered as Apple does (403 BadCertificate).
            do {
                tlsConfiguration.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
            } catch {
                throw SimulatorError.invalidConfiguration("apnsClientCertificateCAPEM", "not a certificate PEM: \(error)")
            }
            tlsConfiguration.certificateVerification = .optionalVerification
            tlsConfiguration.sendCANameList = true
        }
        let sslContext: NIOSSLContext
        do {
            sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        } catch {
            throw SimulatorError.tls("cannot build the TLS context", underlying: error)
        }

        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        let singleStreamConfiguration: NIOHTTP2Handler.ConnectionConfiguration = {
            var single = connectionConfiguration
            single.initialSettings[0] = HTTP2Setting(parameter: .maxConcurrentStreams, value: 1)
            return single
        }()
        var streamSettings = NIOHTTP2Handler.StreamConfiguration()
        // libcurl 7.88 resets streams it has finished with; NIO's default DoS guard (200 resets
        // in 30 s) would then drop busy connections, which no provider does to a well-behaved sender.
        streamSettings.streamResetFrameRateLimit.maximumCount = 1_000_000
        let streamConfiguration = streamSettings
        let http2Configuration = connectionConfiguration
        let logger = self.logger

        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoopThreads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                rules.state.recordConnection()
                let singleStream =
                    !rules.scenarioBook.isEmpty
                    && rules.scenarioBook.take(provider: nil, now: Date(), where: { $0 == .singleStreamUntilValidToken })
                        != nil
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    let certificate = Locked<SimulatorClientCertificate?>(nil)
                    if let clientAuthority {
                        try pipeline.addHandler(
                            NIOSSLServerHandler(context: sslContext) { chain, promise in
                                certificate.withLock { $0 = clientAuthority.inspect(chain, now: Date()) }
                                promise.succeed(.certificateVerified)
                            })
                    } else {
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    if rules.fastMode, rules.scenarioBook.isEmpty {
                        // Fast mode with no fault to inject: frames handled on the connection, no child channels.
                        try pipeline.addHandler(
                            NIOHTTP2Handler(
                                mode: .server, connectionConfiguration: http2Configuration,
                                streamConfiguration: streamConfiguration))
                        try pipeline.addHandler(
                            SimulatorFrameHandler(rules: rules, logger: logger, clientCertificate: certificate))
                        try pipeline.addHandler(SimulatorConnectionErrorHandler(logger: logger, state: rules.state))
                        return
                    }
                    let connection = NIOLoopBound(
                        SimulatorConnection(
                            channel: channel, rules: rules, logger: logger, startsWithSingleStream: singleStream,
                            clientCertificate: certificate),
                        eventLoop: channel.eventLoop)
                    try pipeline.addHandler(
                        SimulatorStreamCounter(state: rules.state) { connection.value.connectionClosed(streamsSent: $0) })
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server,
                        connectionConfiguration: singleStream ? singleStreamConfiguration : http2Configuration,
                        streamConfiguration: streamConfiguration
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            let connection = connection.value
                            let ordinal = connection.streamOpened(now: Date())
                            try stream.pipeline.syncOperations.addHandler(
                                SimulatorStreamHandler(connection: connection, ordinal: ordinal, logger: logger))
                        }
                    }
                    try pipeline.addHandler(SimulatorConnectionErrorHandler(logger: logger, state: rules.state))
                }
            }

        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw SimulatorError.io("cannot bind \(configuration.host):\(configuration.port)", underlying: error)
        }
        let port = channel.localAddress?.port ?? configuration.port
        rules.serverPort = port
        running.withLock {
            $0 = Running(group: group, channel: channel, port: port, caCertificatePEM: tls.caCertificatePEM)
        }
        logger.debug(
            "push simulator listening",
            metadata: ["sim.host": "\(configuration.host)", "sim.port": "\(port)", "sim.fast": "\(configuration.fastMode)"])
    }

    /// The bound port (0 before `start()`).
    public var port: Int {
        running.withLock { $0?.port ?? 0 }
    }

    /// The PEM of the CA clients must trust: the generated CA, or the
    /// configured CA file's contents. Empty before `start()`.
    public var caCertificatePEM: String {
        running.withLock { $0?.caCertificatePEM ?? "" }
    }

    /// `https://127.0.0.1:<port>/token`: the `token_uri` service accounts should name.
    public var tokenURI: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "https://\(host):\(port)/token"
    }

    /// Marks a device token unregistered from `since` on (APNs 410, FCM 404 UNREGISTERED).
    public func markDead(token: String, since: Date) {
        rules?.markDead(token: token, since: since)
    }

    /// Records the environment a device token was issued for (nil forgets it): sent
    /// to a simulator playing the other environment, it gets `400 BadDeviceToken`.
    public func setTokenEnvironment(token: String, environment: SimulatorAPNsEnvironment?) {
        rules?.state.setEnvironment(environment, token: token)
    }

    /// The scenarios in effect.
    public var scenarios: [SimulatorScenario] {
        rules?.scenarios ?? []
    }

    /// Replaces the scenarios at runtime (new connections and requests see them at
    /// once); counters restart and time windows count from now. Throws on a bad scenario.
    public func setScenarios(_ scenarios: [SimulatorScenario]) throws {
        guard let rules else { throw configurationError ?? SimulatorError.notStarted() }
        try rules.setScenarios(scenarios)
    }

    /// A snapshot of everything answered so far.
    public func stats() -> SimulatorStats {
        rules?.stats() ?? SimulatorStats()
    }

    /// Closes the listener and every connection, and stops the event loops.
    public func shutdown() async throws {
        guard let current = running.withLock({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        do {
            try await current.channel.close()
        } catch ChannelError.alreadyClosed {
            // Already closed: nothing to do.
        }
        try await current.group.shutdownGracefully()
        logger.debug("push simulator stopped", metadata: ["sim.port": "\(current.port)"])
    }
}
