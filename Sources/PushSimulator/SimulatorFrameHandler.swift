import Foundation
import Logging
import NIOCore
import NIOHTTP2
import PushCore

/// Serves a fast-mode connection at the HTTP/2 frame level, behind a
/// `NIOHTTP2Handler` with no stream multiplexer: no child channel per stream,
/// only a small entry per open request. APNs and FCM sends are answered from
/// their headers (`SimulatorFastAnswers`, body ignored); every other request
/// (the OAuth token endpoint, unknown paths) is gathered whole and answered by
/// the rules, exactly as the per-stream path does.
///
/// Without a multiplexer nobody else replenishes the flow-control windows, so
/// this handler sends the WINDOW_UPDATEs: for the connection, and for streams
/// still sending a body. Answers are flushed once per read batch, after the
/// batch's stats are recorded. Used only on the connection's event loop.
final class SimulatorFrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The connection window kept open: far above the 64 KiB default, so a busy
    /// client is not held up waiting for WINDOW_UPDATEs.
    static let connectionWindowTarget = 1 << 20
    /// The stream window (the HTTP/2 default we advertise).
    static let streamWindowTarget = 65_535

    /// A request whose END_STREAM has not arrived yet.
    private enum Pending {
        case fast(SimulatorFastAnswers.Send)
        case full(GatheredRequest)
    }

    /// A request the rules answer: its body grows in place, frame by frame.
    private final class GatheredRequest {
        var request: SimulatorRequest
        init(_ request: SimulatorRequest) { self.request = request }
    }

    let rules: SimulatorRules
    let logger: Logger
    /// What the TLS handshake learned about the client certificate (for the rules).
    let clientCertificate: Locked<SimulatorClientCertificate?>
    private var pending: [HTTP2StreamID: Pending] = [:]
    /// Answers held back by a `delay` scenario, by stream.
    var delayed: [HTTP2StreamID: SimulatorAnswer] = [:]
    private var answers: SimulatorFastAnswers
    /// Whether scenarios were set at runtime: then the rules answer every request (delays apply).
    private var scenariosLive = false
    private var scenariosChecked = false
    /// Frames were written since the last flush.
    var needsFlush = false
    var isActive = true
    /// The most streams this connection had open at once.
    private var peakOpenStreams = 0

    init(rules: SimulatorRules, logger: Logger, clientCertificate: Locked<SimulatorClientCertificate?>) {
        self.rules = rules
        self.logger = logger
        self.clientCertificate = clientCertificate
        self.answers = SimulatorFastAnswers(state: rules.state)
        pending.reserveCapacity(rules.maxConcurrentStreams)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if let entry = pending[frame.streamID] {
                // Trailers: only their END_STREAM matters.
                if headers.endStream { complete(entry, streamID: frame.streamID, context: context) }
            } else {
                requestStarted(headers, streamID: frame.streamID, context: context)
            }
        case .data(let data):
            guard let entry = pending[frame.streamID] else { return }
            if case .full(let gathered) = entry, case .byteBuffer(let buffer) = data.data {
                let room = SimulatorStreamHandler.maxBufferedBody - gathered.request.body.count
                if room > 0 { buffer.withUnsafeReadableBytes { gathered.request.body.append(contentsOf: $0.prefix(room)) } }
            }
            if data.endStream { complete(entry, streamID: frame.streamID, context: context) }
        default:
            break  // RST_STREAM arrives as a StreamClosedEvent too; the rest is the connection's business.
        }
    }

    private func requestStarted(
        _ frame: HTTP2Frame.FramePayload.Headers, streamID: HTTP2StreamID, context: ChannelHandlerContext
    ) {
        if !scenariosChecked {
            scenariosChecked = true
            scenariosLive = !rules.scenarioBook.isEmpty
        }
        var path = ""
        var apnsID: String?
        var method = ""
        for (name, value, _) in frame.headers {
            switch name {
            case ":path": path = value
            case ":method": method = value
            case "apns-id": if apnsID == nil { apnsID = value }
            default: break
            }
        }
        // Open now: this one, those still arriving and those whose answer is held back.
        let open = pending.count + delayed.count + 1
        if open > peakOpenStreams {
            peakOpenStreams = open
            rules.state.recordOpenStreams(open)
        }
        let entry: Pending
        if !scenariosLive, let send = SimulatorFastAnswers.send(path: path, apnsID: apnsID) {
            entry = .fast(send)
        } else {
            var request = SimulatorRequest(method: method, path: path)
            request.headers.reserveCapacity(frame.headers.count)
            for (name, value, _) in frame.headers where !name.hasPrefix(":") { request.headers.append((name, value)) }
            entry = .full(GatheredRequest(request))
        }
        if frame.endStream {
            complete(entry, streamID: streamID, context: context)
        } else {
            pending[streamID] = entry
        }
    }

    private func complete(_ entry: Pending, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        pending.removeValue(forKey: streamID)
        switch entry {
        case .fast(let send):
            let answer = answers.answer(send, allocator: context.channel.allocator)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(answer.headers))), promise: nil)
            if let body = answer.body {
                let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(body), endStream: true)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(data))), promise: nil)
            }
            needsFlush = true
        case .full(let gathered):
            var request = gathered.request
            request.clientCertificate = clientCertificate.withLock { $0 }
            answerByRules(request, streamID: streamID, context: context)
        }
    }

    /// Whether a request on this stream is still arriving.
    func isReceiving(_ streamID: HTTP2StreamID) -> Bool {
        pending[streamID] != nil
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        scenariosChecked = false
        // Stats first: a client that has its answer finds it counted.
        recordTally()
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func recordTally() {
        if !answers.tally.isEmpty { rules.state.record(answers.takeTally()) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let window as NIOHTTP2WindowUpdatedEvent:
            windowChanged(window, context: context)
        case let closed as StreamClosedEvent:
            pending.removeValue(forKey: closed.streamID)
            if let answer = delayed.removeValue(forKey: closed.streamID) { recordUnanswered(answer) }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        recordTally()
        pending.removeAll()
        for answer in delayed.values { recordUnanswered(answer) }
        delayed.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            // NIO has reset that stream already; the connection and its other streams go on.
            logger.debug("simulator stream error", metadata: ["sim.error": "\(streamError)"])
            pending.removeValue(forKey: streamError.streamID)
            return
        }
        context.fireErrorCaught(error)
    }
}
