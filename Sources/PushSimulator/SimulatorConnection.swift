import PushCore
import Foundation
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL

/// One client connection's transport state: stream and request counts, and the
/// connection-level faults (GOAWAY after N streams, abrupt reset, SETTINGS
/// changes). Used only on the connection's event loop, which its streams share.
final class SimulatorConnection {
    /// The TCP/TLS channel (the HTTP/2 connection).
    let channel: any Channel
    let rules: SimulatorRules
    private let logger: Logger
    /// What the TLS handshake learned about the client certificate (certificate mode).
    let clientCertificate: Locked<SimulatorClientCertificate?>

    private var streamsOpened = 0
    /// Streams opened and not yet answered or closed, and the most there were.
    private var openStreams = 0
    private var peakOpenStreams = 0
    private var requestsReceived = 0
    /// Streams above this ordinal are never processed (`goaway` scenario).
    private var goawayAfter: Int?
    private var goawaySent = false
    /// Streams at or below the GOAWAY limit that are not finished yet.
    private var unfinished = 0
    /// Raise MAX_CONCURRENT_STREAMS from 1 once a valid credential is seen.
    private var raiseOnValidCredential: Bool
    private var lowered = false
    /// Set once the connection is being reset or closed: nothing more is processed or answered.
    private(set) var isClosing = false

    init(
        channel: any Channel, rules: SimulatorRules, logger: Logger, startsWithSingleStream: Bool,
        clientCertificate: Locked<SimulatorClientCertificate?>
    ) {
        self.channel = channel
        self.rules = rules
        self.logger = logger
        self.raiseOnValidCredential = startsWithSingleStream
        self.clientCertificate = clientCertificate
    }

    /// Counts a new stream and returns its 1-based ordinal on this connection.
    func streamOpened(now: Date) -> Int {
        streamsOpened += 1
        let ordinal = streamsOpened
        openStreams += 1
        if openStreams > peakOpenStreams {
            peakOpenStreams = openStreams
            rules.state.recordOpenStreams(openStreams)
        }
        if goawayAfter == nil, !rules.scenarioBook.isEmpty,
            case .goaway(let limit)? = rules.scenarioBook.take(provider: nil, now: now, where: {
                if case .goaway(let afterStreams) = $0 { return afterStreams == ordinal }
                return false
            })
        {
            goawayAfter = limit
        }
        if !isBeyondGoaway(ordinal) { unfinished += 1 }
        return ordinal
    }

    /// Whether a stream lies above the GOAWAY limit (never to be processed).
    func isBeyondGoaway(_ ordinal: Int) -> Bool {
        goawayAfter.map { ordinal > $0 } ?? false
    }

    /// Counts a complete request; returns whether to reset the connection now,
    /// and whether to process this request first.
    func requestArrived(now: Date) -> (reset: Bool, processFirst: Bool) {
        requestsReceived += 1
        let number = requestsReceived
        guard !rules.scenarioBook.isEmpty,
            case .resetConnection(_, let processed)? = rules.scenarioBook.take(provider: nil, now: now, where: {
                if case .resetConnection(let atRequest, _) = $0 { return atRequest == number }
                return false
            })
        else { return (false, false) }
        return (true, processed)
    }

    /// A stream is done: answered (`answer`), or closed without an answer.
    func streamFinished(ordinal: Int, streamID: HTTP2StreamID?, answer: SimulatorAnswer?, now: Date) {
        openStreams -= 1
        if isBeyondGoaway(ordinal) {
            if answer == nil { rules.state.recordTransport(refusedByGoaway: 1) }
            return
        }
        unfinished -= 1
        if let answer, !isClosing {
            if answer.validCredential, raiseOnValidCredential {
                raiseOnValidCredential = false
                sendMaxConcurrentStreams(rules.maxConcurrentStreams)
            }
            if answer.response.status >= 400, !lowered,
                rules.scenarioBook.take(provider: nil, now: now, where: { $0 == .singleStreamAfterRejection }) != nil
            {
                lowered = true
                sendMaxConcurrentStreams(1)
            }
        }
        if ordinal == goawayAfter, !goawaySent, !isClosing, let streamID {
            goawaySent = true
            rules.state.recordTransport(goaways: 1)
            logger.debug("simulator sends GOAWAY", metadata: ["sim.last_stream_id": "\(streamID)"])
            let frame = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
            channel.writeAndFlush(frame, promise: nil)
        }
        if goawaySent, unfinished <= 0, !isClosing {
            isClosing = true
            // A short grace period lets the last answers and the GOAWAY drain first.
            let channel = self.channel
            channel.eventLoop.scheduleTask(in: .milliseconds(50)) { channel.close(promise: nil) }
        }
    }

    /// The connection closed; its client had opened `sent` streams in all. Those
    /// that never became streams here came above our GOAWAY's last-stream-id
    /// and were ignored by the HTTP/2 layer: refused unprocessed as well.
    func connectionClosed(streamsSent sent: Int) {
        if goawaySent, sent > streamsOpened { rules.state.recordTransport(refusedByGoaway: sent - streamsOpened) }
    }

    /// Closes the TCP connection at once with an RST (SO_LINGER 0), skipping the
    /// TLS close_notify, so streams in flight get no answer.
    func resetAbruptly() {
        guard !isClosing else { return }
        isClosing = true
        rules.state.recordTransport(resets: 1)
        logger.debug("simulator resets a connection", metadata: ["sim.requests": "\(requestsReceived)"])
        if let socket = channel as? any SocketOptionProvider {
            // On the channel's own loop this takes effect synchronously, before the close below.
            _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        }
        let channel = self.channel
        // Run after the current read so no handler is re-entered mid-call.
        channel.eventLoop.assumeIsolated().execute {
            if let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                tls.close(promise: nil)  // from the TLS handler towards the socket: no close_notify
            } else {
                channel.close(promise: nil)
            }
        }
    }

    private func sendMaxConcurrentStreams(_ value: Int) {
        rules.state.recordTransport(settings: 1)
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: value)])))
        channel.writeAndFlush(frame, promise: nil)
    }
}
