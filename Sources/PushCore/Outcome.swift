import Foundation

/// A provider's reason code, kept verbatim. Known codes have names; a code
/// Apple or Google adds tomorrow is still a valid `ProviderReason`.
public struct ProviderReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    /// `rawValue`, cut to `maxBytes`.
    public init(rawValue: String) { self.rawValue = BoundedText.cut(rawValue, maxBytes: Self.maxBytes) }
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public var description: String { rawValue }

    /// A reason is at most this many UTF-8 bytes. The providers' reasons are
    /// identifiers of a few dozen bytes; a server that answers with a longer
    /// one (broken, or hostile) must not make the outcome row unwritable:
    /// `provider_reason` is a key of `deliveries_failures_idx` and included in
    /// `delivery_attempt_log_utc_hour_idx`, and PostgreSQL refuses an index
    /// entry over 2704 bytes.
    public static let maxBytes = 256
}

/// What one provider response means for the delivery.
public enum ProviderOutcome: Sendable, Equatable {
    /// The provider took the notification (not: the device has it).
    case accepted(providerMessageID: String?)
    /// The token is dead or not ours; invalidate it (APNs 410 carries `since`).
    case invalidToken(reason: ProviderReason, since: Date?)
    /// Permanently refused; do not retry.
    case rejected(reason: ProviderReason)
    /// Our credentials were refused; refresh them and retry once.
    case authFailure(reason: ProviderReason)
    /// Try again later, no sooner than `retryAfter` when the provider said so.
    case transient(reason: ProviderReason, retryAfter: Duration?)
    /// A status/reason combination we do not know; kept verbatim, treated as transient by policy.
    case unknown(status: Int, reason: ProviderReason)
}

/// The status of one (notification, device) in the delivery ledger.
public enum DeliveryStatus: String, Sendable, CaseIterable {
    case pending
    case retrying
    /// Not sent yet because its provider could not take it (open circuit,
    /// rate limit, no credential): parked in Kafka, no attempt spent, until
    /// the provider can take it again.
    case parked
    case accepted
    case delivered
    case opened
    case invalidToken = "invalid_token"
    case rejected
    case expired
    case deadLettered = "dead_lettered"
    /// Not sent because its campaign was cancelled (`pushfleet campaign
    /// cancel`): final, a failure status, never sent again (a resume does not
    /// bring it back).
    case cancelled

    /// Final statuses are never sent again.
    public var isFinal: Bool {
        switch self {
        case .pending, .retrying, .parked: false
        default: true
        }
    }
}

extension ProviderOutcome {
    /// The ledger status this outcome leads to when no retry follows.
    public var finalStatus: DeliveryStatus? {
        switch self {
        case .accepted: .accepted
        case .invalidToken: .invalidToken
        case .rejected: .rejected
        case .authFailure, .transient, .unknown: nil
        }
    }

    /// The reason text recorded in Postgres.
    public var reason: String? {
        switch self {
        case .accepted: nil
        case .invalidToken(let r, _), .rejected(let r), .authFailure(let r), .transient(let r, _): r.rawValue
        case .unknown(_, let r): r.rawValue
        }
    }
}
