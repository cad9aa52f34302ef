import NIOCore

/// Counts the requests a connection's client sent, from the decrypted bytes
/// between TLS and HTTP/2: every HEADERS frame that opens a new client stream.
///
/// swift-nio-http2 silently ignores streams opened above a GOAWAY's
/// last-stream-id (as RFC 9113 lets a server do), so no handler behind it
/// ever sees them; the client still sent them and will send them again. This
/// handler only reads frame headers (9 bytes each) and passes every byte on
/// unchanged. Used only on the connection's event loop.
final class SimulatorStreamCounter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client connection preface ("PRI * HTTP/2.0…", 24 bytes) comes first.
    private var prefaceLeft = 24
    private var header: [UInt8] = []
    private var payloadLeft = 0
    private var highestStreamID: UInt32 = 0
    /// Client streams opened on this connection so far.
    private(set) var opened = 0
    private let state: SimulatorState
    private let closed: (Int) -> Void

    /// - Parameter closed: called once when the connection closes, with `opened`.
    init(state: SimulatorState, closed: @escaping (Int) -> Void) {
        self.state = state
        self.closed = closed
        header.reserveCapacity(9)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let before = opened
        unwrapInboundIn(data).withUnsafeReadableBytes { scan($0) }
        if opened > before { state.recordStreamsOpened(opened - before) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed(opened)
        context.fireChannelInactive()
    }

    private func scan(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            if prefaceLeft > 0 {
                let step = min(prefaceLeft, bytes.count - index)
                prefaceLeft -= step
                index += step
            } else if payloadLeft > 0 {
                let step = min(payloadLeft, bytes.count - index)
                payloadLeft -= step
                index += step
            } else {
                header.append(bytes[index])
                index += 1
                if header.count == 9 { frameHeaderComplete() }
            }
        }
    }

    private func frameHeaderComplete() {
        payloadLeft = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
        let type = header[3]
        let streamID = UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
        header.removeAll(keepingCapacity: true)
        // HEADERS (type 1) on a new odd (client) stream opens it; trailers reuse an old id.
        if type == 1, streamID & 1 == 1, streamID > highestStreamID {
            highestStreamID = streamID
            opened += 1
        }
    }
}
