import Foundation
import Logging
import NIOCore
import NIOHTTP2

/// Serves one HTTP/2 stream: gathers the request's headers and body, asks the
/// rules for the answer, applies the connection's faults (hold above a GOAWAY,
/// reset, delay) and writes the answer back. One instance per stream, used only
/// on that stream's event loop.
final class SimulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// Bodies beyond this are cut (every provider limit is far below it).
    static let maxBufferedBody = 1 << 20

    private let connection: SimulatorConnection
    private let ordinal: Int
    private let logger: Logger
    private var streamID: HTTP2StreamID?
    private var headers: HTTP2Frame.FramePayload.Headers?
    private var body: [UInt8] = []
    private var requestComplete = false
    /// What the rules decided, once they ran (the request counts as processed).
    private var processed: SimulatorAnswer?
    /// The answer being written (closing the stream may re-enter `channelInactive` mid-write).
    private var written: SimulatorAnswer?
    private var finished = false

    init(connection: SimulatorConnection, ordinal: Int, logger: Logger) {
        self.connection = connection
        self.ordinal = ordinal
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil { headers = frame }  // later HEADERS are trailers: ignored
            if frame.endStream { requestArrived(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                let room = Self.maxBufferedBody - body.count
                if room > 0 { buffer.withUnsafeReadableBytes { body.append(contentsOf: $0.prefix(room)) } }
            }
            if frame.endStream { requestArrived(context: context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(answered: written)
        context.fireChannelInactive()
    }

    private func requestArrived(context: ChannelHandlerContext) {
        guard !requestComplete, let headers else { return }
        requestComplete = true
        // Above a GOAWAY's last-stream-id: held, never processed; the GOAWAY drops it.
        guard !connection.isClosing, !connection.isBeyondGoaway(ordinal) else { return }
        let now = Date()
        let request = makeRequest(headers)
        let arrival = connection.requestArrived(now: now)
        if arrival.reset {
            if arrival.processFirst { processed = connection.rules.answer(to: request, now: now) }
            connection.resetAbruptly()
            return
        }
        let answer = connection.rules.answer(to: request, now: now)
        processed = answer
        answer.logIfError(path: request.path, logger: logger)
        if answer.delayMilliseconds > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(answer.delayMilliseconds))) {
                self.write(answer, context: context)
            }
        } else {
            write(answer, context: context)
        }
    }

    private func makeRequest(_ headers: HTTP2Frame.FramePayload.Headers) -> SimulatorRequest {
        var request = SimulatorRequest(method: "", path: "")
        request.headers.reserveCapacity(headers.headers.count)
        for (name, value, _) in headers.headers {
            switch name {
            case ":method": request.method = value
            case ":path": request.path = value
            default: if !name.hasPrefix(":") { request.headers.append((name, value)) }
            }
        }
        request.body = body
        request.clientCertificate = connection.clientCertificate.withLock { $0 }
        return request
    }

    private func write(_ answer: SimulatorAnswer, context: ChannelHandlerContext) {
        guard !finished, !connection.isClosing, context.channel.isActive else { return }
        written = answer
        let response = answer.response
        // (HPACKHeaders is built through the frame so this module needs no NIOHPACK import.)
        var headersFrame = HTTP2Frame.FramePayload.Headers(
            headers: [":status": String(response.status)], endStream: response.body.isEmpty)
        for header in response.headers { headersFrame.headers.add(name: header.name, value: header.value) }
        context.write(wrapOutboundOut(.headers(headersFrame)), promise: nil)
        if !response.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        context.flush()
        finish(answered: answer)
    }

    /// Once per stream: an answer that never left is recorded, and the connection told.
    private func finish(answered answer: SimulatorAnswer?) {
        guard !finished else { return }
        finished = true
        if answer == nil, let processed {
            connection.rules.state.recordUnanswered(provider: processed.response.provider, apnsID: processed.apnsID)
        }
        connection.streamFinished(ordinal: ordinal, streamID: streamID, answer: answer, now: Date())
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("simulator stream error", metadata: ["sim.error": "\(error)"])
        context.close(promise: nil)
    }
}

/// Last handler of a connection: logs connection errors (TLS, protocol) at
/// debug level and closes the connection.
final class SimulatorConnectionErrorHandler: ChannelInboundHandler {
    typealias InboundIn = Never

    private let logger: Logger
    private let state: SimulatorState

    init(logger: Logger, state: SimulatorState) {
        self.logger = logger
        self.state = state
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            // NIO has reset that one stream already (RST_STREAM); the connection
            // and its other streams go on (closing it here cut off the answers
            // still due before a GOAWAY).
            logger.debug("simulator stream error", metadata: ["sim.error": "\(streamError)"])
            return
        }
        if error is NIOHTTP2Errors.MaxStreamsViolation { state.recordStreamLimitViolation() }
        logger.debug("simulator connection error", metadata: ["sim.error": "\(error)"])
        context.close(promise: nil)
    }
}
