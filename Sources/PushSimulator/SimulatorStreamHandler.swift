import Foundation
import Logging
import NIOCore
import NIOHTTP2

/// Serves one HTTP/2 stream: gathers the request's headers and body, asks the
/// rules for the answer, and writes it back. One instance per stream, used only
/// on that stream's event loop.
final class SimulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// Bodies beyond this are cut (every provider limit is far below it).
    static let maxBufferedBody = 1 << 20

    private let rules: SimulatorRules
    private let logger: Logger
    private var headers: HTTP2Frame.FramePayload.Headers?
    private var body: [UInt8] = []
    private var responded = false

    init(rules: SimulatorRules, logger: Logger) {
        self.rules = rules
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil { headers = frame }  // later HEADERS are trailers: ignored
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                let room = Self.maxBufferedBody - body.count
                if room > 0 { buffer.withUnsafeReadableBytes { body.append(contentsOf: $0.prefix(room)) } }
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard !responded, let headers else { return }
        responded = true
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
        let response = rules.respond(to: request, now: Date())
        if response.status >= 400 {
            logger.debug(
                "simulator answered an error",
                metadata: [
                    "sim.path": "\(request.path)", "sim.status": "\(response.status)", "sim.reason": "\(response.reason)",
                ])
        }

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

    init(logger: Logger) {
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("simulator connection error", metadata: ["sim.error": "\(error)"])
        context.close(promise: nil)
    }
}
