/// A fault to inject into the simulator, so retry, back-off, reconnect and
/// de-duplication paths can be tested against a real HTTP/2 server.
///
/// When a scenario is live: `afterRequests` matching requests must have
/// arrived first; `startSeconds`/`durationSeconds` bound it in time (counted
/// from the moment the scenarios took effect: `start()` or `setScenarios(_:)`);
/// `share` spreads it evenly over that fraction of eligible events; `count`
/// caps how often it fires (one answer, one delay, one GOAWAY, one reset or
/// one SETTINGS change each).
public struct SimulatorScenario: Sendable, Codable, Equatable {
    /// What the fault does.
    public enum Fault: Sendable, Codable, Equatable {
        /// Answer with this HTTP status in the provider's own error shape:
        /// APNs `429 TooManyRequests`, `500 InternalServerError`, `503 ServiceUnavailable`;
        /// FCM `429 RESOURCE_EXHAUSTED (QUOTA_EXCEEDED)`, `500 INTERNAL`, `503 UNAVAILABLE`;
        /// OAuth (provider `"oauth"`) `{"error":"temporarily_unavailable"}` (`rate_limit_exceeded` for 429).
        /// With `retryAfterSeconds`, the answer carries `retry-after`.
        /// Applies after the request is authenticated (OAuth: before the grant is checked).
        case httpError(status: Int, retryAfterSeconds: Int?)
        /// Holds the (otherwise unchanged) answer back this long: a slow provider.
        case delay(milliseconds: Int)
        /// The (otherwise unchanged) answer with `bodyBytes` spaces after its
        /// body (so a JSON body stays valid JSON) and `headers` extra header
        /// lines `x-pad-N`: a broken or hostile server, for the client's
        /// limits on what it keeps of an answer.
        case oversizedAnswer(bodyBytes: Int, headers: Int)
        /// Connection-level: right after answering the `afterStreams`-th stream of a
        /// connection, send GOAWAY(NO_ERROR) naming that stream as the last one
        /// processed; later streams are never processed (`streamsRefusedByGoaway`),
        /// and the connection closes once the streams up to it are answered.
        case goaway(afterStreams: Int)
        /// Connection-level: when the `atRequest`-th request of a connection has
        /// arrived, close the TCP connection abruptly (RST), answering neither it
        /// nor any request still in flight. With `processed`, that request is
        /// handled first (accepted, counted in `apnsSendsByID`) and its answer lost:
        /// the case where a re-send is a real duplicate.
        case resetConnection(atRequest: Int, processed: Bool)
        /// Connection-level: after the first rejected request (status ≥ 400) on a
        /// connection, send SETTINGS with MAX_CONCURRENT_STREAMS = 1.
        case singleStreamAfterRejection
        /// Connection-level: connections start with MAX_CONCURRENT_STREAMS = 1 and
        /// raise it to the configured value with a SETTINGS frame once an APNs
        /// request carries a valid provider token or certificate (what APNs does).
        case singleStreamUntilValidToken

        /// Throws for a key of a fault's JSON object (or of its case's object) that the case does not declare:
        /// a misspelt argument would otherwise be dropped (`retryAfterSeconds` is optional).
        static func rejectUnknownKeys(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(cases: CodingKeys.self) { faultCase -> any CodingKey.Type in
                switch faultCase {
                case .httpError: return HttpErrorCodingKeys.self
                case .delay: return DelayCodingKeys.self
                case .oversizedAnswer: return OversizedAnswerCodingKeys.self
                case .goaway: return GoawayCodingKeys.self
                case .resetConnection: return ResetConnectionCodingKeys.self
                case .singleStreamAfterRejection: return SingleStreamAfterRejectionCodingKeys.self
                case .singleStreamUntilValidToken: return SingleStreamUntilValidTokenCodingKeys.self
                }
            }
        }

        /// Faults decided per connection rather than per request; they ignore `provider`.
        var isConnectionLevel: Bool {
            switch self {
            case .goaway, .resetConnection, .singleStreamAfterRejection, .singleStreamUntilValidToken: return true
            case .httpError, .delay, .oversizedAnswer: return false
            }
        }
    }

    /// `"apns"`, `"fcm"` or `"oauth"` (the token endpoint); nil applies to APNs and FCM.
    public var provider: String?
    /// The fault.
    public var fault: Fault
    /// How many matching requests pass untouched before the fault starts.
    public var afterRequests: Int
    /// How many times the fault fires; nil means no limit.
    public var count: Int?
    /// The fraction (0 < share ≤ 1) of eligible events that get the fault, spread evenly; nil means all.
    public var share: Double?
    /// Seconds after the scenarios took effect before the fault starts; nil means at once.
    public var startSeconds: Double?
    /// How long the fault lasts once started; nil means until the scenarios change.
    public var durationSeconds: Double?

    public init(
        provider: String? = nil, fault: Fault, afterRequests: Int = 0, count: Int? = nil, share: Double? = nil,
        startSeconds: Double? = nil, durationSeconds: Double? = nil
    ) {
        self.provider = provider
        self.fault = fault
        self.afterRequests = afterRequests
        self.count = count
        self.share = share
        self.startSeconds = startSeconds
        self.durationSeconds = durationSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case provider, fault, afterRequests, count, share, startSeconds, durationSeconds
    }

    /// Decodes with only `fault` required; a key it does not know (here or in the fault) is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        provider = try container.decodeIfPresent(String.self, forKey: .provider)
        if container.contains(.fault) { try Fault.rejectUnknownKeys(from: container.superDecoder(forKey: .fault)) }
        fault = try container.decode(Fault.self, forKey: .fault)
        afterRequests = try container.decodeIfPresent(Int.self, forKey: .afterRequests) ?? 0
        count = try container.decodeIfPresent(Int.self, forKey: .count)
        share = try container.decodeIfPresent(Double.self, forKey: .share)
        startSeconds = try container.decodeIfPresent(Double.self, forKey: .startSeconds)
        durationSeconds = try container.decodeIfPresent(Double.self, forKey: .durationSeconds)
    }

    /// Whether a request for `provider` counts towards this scenario.
    func matches(provider requestProvider: String) -> Bool {
        if let provider { return provider == requestProvider }
        return requestProvider == "apns" || requestProvider == "fcm" || fault.isConnectionLevel
    }

    /// Checks the values the types cannot express; the error names `key`.
    func validate(key: String) throws {
        func fail(_ field: String, _ message: String) -> SimulatorError {
            SimulatorError.invalidConfiguration("\(key).\(field)", message)
        }
        if let provider, !["apns", "fcm", "oauth"].contains(provider) {
            throw fail("provider", "must be apns, fcm or oauth")
        }
        guard afterRequests >= 0 else { throw fail("afterRequests", "must be ≥ 0") }
        if let count, count < 0 { throw fail("count", "must be ≥ 0") }
        if let share, !(share > 0 && share <= 1) { throw fail("share", "must be in (0, 1]") }
        if let startSeconds, !(startSeconds >= 0) { throw fail("startSeconds", "must be ≥ 0") }
        if let durationSeconds, !(durationSeconds > 0) { throw fail("durationSeconds", "must be > 0") }
        switch fault {
        case .httpError(let status, let retryAfter):
            guard (400...599).contains(status) else { throw fail("fault.httpError.status", "must be 400...599") }
            if let retryAfter, retryAfter < 0 { throw fail("fault.httpError.retryAfterSeconds", "must be ≥ 0") }
        case .delay(let milliseconds):
            guard (0...600_000).contains(milliseconds) else { throw fail("fault.delay.milliseconds", "must be 0...600000") }
        case .goaway(let afterStreams):
            guard afterStreams >= 1 else { throw fail("fault.goaway.afterStreams", "must be ≥ 1") }
        case .resetConnection(let atRequest, _):
            guard atRequest >= 1 else { throw fail("fault.resetConnection.atRequest", "must be ≥ 1") }
        case .oversizedAnswer(let bodyBytes, let headers):
            guard (0...64 << 20).contains(bodyBytes) else { throw fail("fault.oversizedAnswer.bodyBytes", "must be 0...67108864") }
            guard (0...10_000).contains(headers) else { throw fail("fault.oversizedAnswer.headers", "must be 0...10000") }
        case .singleStreamAfterRejection, .singleStreamUntilValidToken:
            break
        }
    }
}
