import Foundation
import NIOCore
import NIOHTTP2

/// The frame-level path's requests that the rules answer (the OAuth token
/// endpoint, unknown paths, and everything while scenarios are live): the
/// same answer, logging and `delay` handling as `SimulatorStreamHandler`.
extension SimulatorFrameHandler {
    func answerByRules(_ request: SimulatorRequest, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        let answer = rules.answer(to: request, now: Date())
        answer.logIfError(path: request.path, logger: logger)
        guard answer.delayMilliseconds > 0 else {
            write(answer.response, streamID: streamID, context: context)
            return
        }
        delayed[streamID] = answer
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(answer.delayMilliseconds))) {
            // Gone meanwhile (stream or connection closed): already counted as unanswered.
            guard self.isActive, let answer = self.delayed.removeValue(forKey: streamID) else { return }
            self.write(answer.response, streamID: streamID, context: context)
            context.flush()
            self.needsFlush = false
        }
    }

    private func write(_ response: SimulatorResponse, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        // (HPACKHeaders is built through the frame so this module needs no NIOHPACK import.)
        var headers = HTTP2Frame.FramePayload.Headers(
            headers: [":status": String(response.status)], endStream: response.body.isEmpty)
        for header in response.headers { headers.headers.add(name: header.name, value: header.value) }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(headers))), promise: nil)
        if !response.body.isEmpty {
            let data = HTTP2Frame.FramePayload.Data(
                data: .byteBuffer(context.channel.allocator.buffer(bytes: response.body)), endStream: true)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(data))), promise: nil)
        }
        needsFlush = true
    }

    func recordUnanswered(_ answer: SimulatorAnswer) {
        rules.state.recordUnanswered(provider: answer.response.provider, apnsID: answer.apnsID)
    }
}
