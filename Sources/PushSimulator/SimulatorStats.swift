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
    /// Streams the server saw above a GOAWAY's last-stream-id: never processed, safe to retry.
    public var streamsRefusedByGoaway: Int
    /// Connections closed abruptly by the `resetConnection` scenario.
    public var connectionsReset: Int
    /// Mid-connection SETTINGS frames sent (MAX_CONCURRENT_STREAMS changes).
    public var settingsUpdatesSent: Int
    /// `apns-id`s not recorded in `apnsSendsByID` (its cap reached, or recording off).
    public var apnsSendIDsNotRecorded: Int

    public init(
        responses: [String: Int] = [:], apnsSendsByID: [String: Int] = [:], fcmAccepted: Int = 0,
        apnsAccepted: Int = 0, tokensIssued: Int = 0, connectionsAccepted: Int = 0,
        apnsUnansweredIDs: [String: Int] = [:], requestsUnanswered: Int = 0, goawaysSent: Int = 0,
        streamsRefusedByGoaway: Int = 0, connectionsReset: Int = 0, settingsUpdatesSent: Int = 0,
        apnsSendIDsNotRecorded: Int = 0
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
    }

    /// The count for one provider, status and reason (0 if none).
    public func count(_ provider: String, _ status: Int, _ reason: String) -> Int {
        responses["\(provider)|\(status)|\(reason)"] ?? 0
    }
}
