import NIOCore
import NIOHTTP2

/// The fast-mode answers to APNs and FCM sends, built for one connection
/// without the rules: the same status, headers and body `SimulatorRules`
/// gives in fast mode, with their stats gathered into a `SimulatorTally`
/// that the connection records once per read batch. Used on one event loop.
struct SimulatorFastAnswers {
    /// A send the fast path answers from its headers alone.
    enum Send {
        /// `/3/device…`: 200 with the request's valid `apns-id`, or a new one.
        case apns(validID: String?)
        /// `/v1/projects/<project>/messages:send`: 200 with a message name.
        case fcm(project: Substring)
    }

    private let state: SimulatorState
    private var uuids = SimulatorUUIDGenerator()
    /// FCM message numbers reserved from the state, one block at a time: `next...<end`.
    private var nextMessageNumber: UInt64 = 0
    private var endMessageNumber: UInt64 = 0
    /// FCM `{"name":"projects/<project>/messages/` for the last project seen (escaped once).
    private var fcmProject: Substring = ""
    private var fcmNamePrefix: [UInt8] = []
    /// Stats not yet recorded in the shared state.
    private(set) var tally: SimulatorTally

    init(state: SimulatorState) {
        self.state = state
        tally = SimulatorTally(recordSendIDs: state.recordSendIDs)
    }

    /// Which fast send `path` and `apnsID` make, or nil for a request the rules must answer.
    static func send(path: String, apnsID: String?) -> Send? {
        switch SimulatorRules.provider(forPath: path) {
        case "apns": return .apns(validID: apnsID.flatMap { SimulatorRules.isUUID($0) ? $0 : nil })
        case "fcm": return SimulatorRules.fcmProject(inPath: path).map { .fcm(project: $0) }
        default: return nil
        }
    }

    /// Returns the tally gathered so far and starts a new one.
    mutating func takeTally() -> SimulatorTally {
        defer { tally.reset() }
        return tally
    }

    /// The answer's frames, counted in the tally; `body` is nil when the HEADERS end the stream.
    mutating func answer(
        _ send: Send, allocator: ByteBufferAllocator
    ) -> (headers: HTTP2Frame.FramePayload.Headers, body: ByteBuffer?) {
        switch send {
        case .apns(let validID):
            tally.countAPNs(id: validID)
            // (HPACKHeaders is built through the frame so this module needs no NIOHPACK import.)
            var headers = HTTP2Frame.FramePayload.Headers(headers: [":status": "200"], endStream: true)
            // Each id is new: indexing it would only churn the client's HPACK table.
            headers.headers.add(name: "apns-id", value: validID ?? uuids.next(), indexing: .nonIndexable)
            return (headers, nil)
        case .fcm(let project):
            tally.countFCM()
            if project != fcmProject || fcmNamePrefix.isEmpty {
                // `quoted` escapes per character: the prefix's quoted form is the whole name's up to the id.
                fcmNamePrefix = Array(("{\"name\":" + JSONWriter.quoted("projects/\(project)/messages/")).utf8.dropLast())
                fcmProject = project
            }
            var body = allocator.buffer(capacity: fcmNamePrefix.count + 32)
            body.writeBytes(fcmNamePrefix)
            // The id `0:<n>%sim` needs no JSON escaping.
            body.writeStaticString("0:")
            body.writeString(String(takeMessageNumber()))
            body.writeStaticString("%sim\"}")
            let headers = HTTP2Frame.FramePayload.Headers(
                headers: [":status": "200", "content-type": "application/json; charset=UTF-8"], endStream: false)
            return (headers, body)
        }
    }

    /// A process-unique FCM message number (blocks of 64 keep the shared lock off the per-request path).
    private mutating func takeMessageNumber() -> UInt64 {
        if nextMessageNumber == endMessageNumber {
            nextMessageNumber = state.reserveMessageNumbers(64)
            endMessageNumber = nextMessageNumber + 64
        }
        defer { nextMessageNumber += 1 }
        return nextMessageNumber
    }
}
