/// A snapshot of what the simulator answered.
public struct SimulatorStats: Sendable, Codable, Equatable {
    /// Count per `"provider|status|reason"`, e.g. `"apns|410|Unregistered"` or `"fcm|200|OK"`.
    public var responses: [String: Int]
    /// How many APNs requests arrived carrying each `apns-id` (any outcome):
    /// a count above one means the sender sent that notification again.
    public var apnsSendsByID: [String: Int]
    /// FCM messages answered 200 (not counting `validate_only`).
    public var fcmAccepted: Int
    /// APNs notifications answered 200.
    public var apnsAccepted: Int
    /// OAuth access tokens issued.
    public var tokensIssued: Int
    /// TCP connections accepted (each may carry many HTTP/2 streams).
    public var connectionsAccepted: Int

    public init(
        responses: [String: Int] = [:], apnsSendsByID: [String: Int] = [:], fcmAccepted: Int = 0,
        apnsAccepted: Int = 0, tokensIssued: Int = 0, connectionsAccepted: Int = 0
    ) {
        self.responses = responses
        self.apnsSendsByID = apnsSendsByID
        self.fcmAccepted = fcmAccepted
        self.apnsAccepted = apnsAccepted
        self.tokensIssued = tokensIssued
        self.connectionsAccepted = connectionsAccepted
    }

    /// The count for one provider, status and reason (0 if none).
    public func count(_ provider: String, _ status: Int, _ reason: String) -> Int {
        responses["\(provider)|\(status)|\(reason)"] ?? 0
    }
}
