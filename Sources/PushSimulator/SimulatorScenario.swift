/// A fault to inject into the simulator's answers, so retry and back-off paths
/// can be tested. Faults that need the transport (GOAWAY after N streams,
/// RST_STREAM, SETTINGS changes, slow answers) are meant to become new `Fault`
/// cases handled by the stream handler; only answer-level faults exist now.
public struct SimulatorScenario: Sendable, Codable, Equatable {
    /// What the fault does.
    public enum Fault: Sendable, Codable, Equatable {
        /// Answer with this HTTP status in the provider's own error shape:
        /// APNs `429 TooManyRequests`, `500 InternalServerError`, `503 ServiceUnavailable`;
        /// FCM `429 RESOURCE_EXHAUSTED (QUOTA_EXCEEDED)`, `500 INTERNAL`, `503 UNAVAILABLE`.
        /// With `retryAfterSeconds`, the answer carries `retry-after`.
        case httpError(status: Int, retryAfterSeconds: Int?)
    }

    /// `"apns"` or `"fcm"`; nil applies to both (never to the OAuth endpoint).
    public var provider: String?
    /// The fault.
    public var fault: Fault
    /// How many matching requests pass untouched before the fault starts.
    public var afterRequests: Int
    /// How many requests get the fault; nil means every one after `afterRequests`.
    public var count: Int?

    public init(provider: String? = nil, fault: Fault, afterRequests: Int = 0, count: Int? = nil) {
        self.provider = provider
        self.fault = fault
        self.afterRequests = afterRequests
        self.count = count
    }
}
