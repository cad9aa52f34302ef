/// A snapshot of what the simulator answered.
public struct SimulatorStats: Sendable, Codable, Equatable {
    /// Count per `"provider|status|reason"`, e.g. `"apns|410|Unregistered"` or `"fcm|200|OK"`.
    public var responses: [String: Int]
    /// How many APNs requests carrying each `apns-id` were processed (any outcome,
    /// answered or not): a count above one means the sender sent that notification again.
    /// Bounded (`SimulatorConfiguration.maxRecordedSendIDs`); off when `recordSendIDs` is false.
    public var apnsSendsByID: [String: Int]
    /// FCM messages answered 200 (not counting `validate_only`).
    public var fcmAccepted: Int
    /// APNs notifications answered 200.
    public var apnsAccepted: Int
    /// OAuth access tokens issued.
    public var tokensIssued: Int
    /// TCP connections accepted (each may carry many HTTP/2 streams).
    public var connectionsAccepted: Int
    /// `apns-id`s processed whose answer never reached the client (connection reset,
    /// or closed while the answer was delayed): a later re-send of one of these is a
    /// duplicate the sender could not avoid.
    public var apnsUnansweredIDs: [String: Int]
    /// Processed requests (any provider) whose answer never reached the client.
    public var requestsUnanswered: Int
    /// GOAWAY frames sent by the `goaway` scenario.
    public var goawaysSent: Int
    /// Streams the server saw above a GOAWAY's last-stream-id (opened before it and dropped, or
    /// opened after it and refused with RST_STREAM): never processed, safe to retry.
    public var streamsRefusedByGoaway: Int
    /// Connections closed abruptly by the `resetConnection` scenario.
    public var connectionsReset: Int
    /// Mid-connection SETTINGS frames sent (MAX_CONCURRENT_STREAMS changes).
    public var settingsUpdatesSent: Int
    /// `apns-id`s not recorded in `apnsSendsByID` (its cap reached, or recording off).
    public var apnsSendIDsNotRecorded: Int
    /// Streams clients opened (HEADERS on a new stream: one request each), over
    /// all connections: every request that reached the server, processed or
    /// not, including those above a GOAWAY that HTTP/2 ignores. Kept when
    /// streams go through the rules (`fastMode` off or scenarios set); 0 in fast mode.
    public var streamsOpened: Int
    /// The most streams one connection had open at once (opened by the client's
    /// HEADERS, until answered or closed), over all connections.
    public var peakConcurrentStreams: Int
    /// Connections closed because the client opened more streams than the
    /// server's MAX_CONCURRENT_STREAMS allowed (once the client had acknowledged it).
    public var streamLimitViolations: Int
    /// Processed push requests in arrival order, up to `SimulatorConfiguration.requestLog`.
    public var requests: [SimulatorRequestRecord] = []
    /// Processed push requests past that limit (not logged).
    public var requestsNotLogged = 0

    public init(
        responses: [String: Int] = [:], apnsSendsByID: [String: Int] = [:], fcmAccepted: Int = 0,
        apnsAccepted: Int = 0, tokensIssued: Int = 0, connectionsAccepted: Int = 0,
        apnsUnansweredIDs: [String: Int] = [:], requestsUnanswered: Int = 0, goawaysSent: Int = 0,
        streamsRefusedByGoaway: Int = 0, connectionsReset: Int = 0, settingsUpdatesSent: Int = 0,
        apnsSendIDsNotRecorded: Int = 0, streamsOpened: Int = 0, peakConcurrentStreams: Int = 0, streamLimitViolations: Int = 0
    ) {
        self.responses = responses
        self.apnsSendsByID = apnsSendsByID
        self.fcmAccepted = fcmAccepted
        self.apnsAccepted = apnsAccepted
        self.tokensIssued = tokensIssued
        self.connectionsAccepted = connectionsAccepted
        self.apnsUnansweredIDs = apnsUnansweredIDs
        self.requestsUnanswered = requestsUnanswered
        self.goawaysSent = goawaysSent
        self.streamsRefusedByGoaway = streamsRefusedByGoaway
        self.connectionsReset = connectionsReset
        self.settingsUpdatesSent = settingsUpdatesSent
        self.apnsSendIDsNotRecorded = apnsSendIDsNotRecorded
        self.streamsOpened = streamsOpened
        self.peakConcurrentStreams = peakConcurrentStreams
        self.streamLimitViolations = streamLimitViolations
    }

    /// The count for one provider, status and reason (0 if none).
    public func count(_ provider: String, _ status: Int, _ reason: String) -> Int {
        responses["\(provider)|\(status)|\(reason)"] ?? 0
    }
}

/// One processed push request of the request log.
public struct SimulatorRequestRecord: Sendable, Codable, Equatable {
    /// When the simulator had the whole request (seconds since 1970).
    public var at: Double
    /// `apns`, `fcm`, `webpush` or `hms`.
    public var provider: String
    /// The device token (APNs: from the path; FCM: `message.token`, else
    /// `topic:<name>` / `condition:<expression>`), else the path.
    public var target: String
    /// The status answered.
    public var status: Int

    public init(at: Double, provider: String, target: String, status: Int) {
        self.at = at
        self.provider = provider
        self.target = target
        self.status = status
    }
}
