import NIOCore
import NIOHTTP2

/// Flow control for the frame-level path. `NIOHTTP2Handler` reports every
/// inbound window change (each DATA frame shrinks the connection's and its
/// stream's); with no multiplexer behind it, this handler tops them up, as
/// NIOHTTP2's own window manager does: once a window falls to half its target
/// or below, a WINDOW_UPDATE brings it back to the target. Bodies are consumed
/// as they arrive, so nothing buffered needs to be counted.
extension SimulatorFrameHandler {
    func windowChanged(_ event: NIOHTTP2WindowUpdatedEvent, context: ChannelHandlerContext) {
        guard let size = event.inboundWindowSize else { return }  // nil: the client has finished sending
        let target: Int
        if event.streamID == .rootStream {
            target = Self.connectionWindowTarget
        } else {
            // A stream is only topped up while its request is still arriving.
            guard isReceiving(event.streamID) else { return }
            target = Self.streamWindowTarget
        }
        // An unwritable channel would hold the WINDOW_UPDATE back unapplied, and the next
        // DATA frame would ask for another: wait for a writable channel and a fresh report.
        guard let increment = Self.windowIncrement(size: size, target: target), context.channel.isWritable else {
            return
        }
        let frame = HTTP2Frame(streamID: event.streamID, payload: .windowUpdate(windowSizeIncrement: increment))
        context.write(wrapOutboundOut(frame), promise: nil)
        needsFlush = true
    }

    /// The WINDOW_UPDATE increment for a window of `size`, or nil while it is above half of `target`.
    static func windowIncrement(size: Int, target: Int) -> Int? {
        if size > target / 2 { return nil }
        // A window can go negative after a SETTINGS change; an increment is at most 2^31-1.
        return min(target - size, Int(Int32.max))
    }
}
