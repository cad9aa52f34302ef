import PushCore

/// Keeps label values safe and bounded. Label values come from provider
/// answers, configuration and intake messages, so a value is used only when
/// it looks like an identifier: at most `maxLength` characters (shorter than
/// an APNs device token's 64 hex digits; FCM tokens are longer still) made of
/// `A-Z a-z 0-9 _ - . : ( ) /`. Anything else, and every new value once a
/// label has seen `maxDistinct` of them, is recorded as `other`. So no
/// secret, token, payload or free-text error reaches a label, and a flood of
/// novel reasons cannot create unbounded series.
struct LabelBudget: Sendable {
    /// Longest value kept verbatim.
    static let maxLength = 40
    /// Distinct values kept per label name (for each of `app`, `reason`, …).
    static let maxDistinct = 64
    /// What unusable or excess values become.
    static let other = "other"

    private let seen = Locked<[String: Set<String>]>([:])

    /// `value` when it is a well-formed identifier within the budget of
    /// `label`, otherwise `other`. The empty string is kept (no reason).
    func bounded(_ label: String, _ value: String) -> String {
        guard value.isEmpty || Self.isIdentifier(value) else { return Self.other }
        return seen.withLock { seen in
            if seen[label, default: []].contains(value) { return value }
            guard seen[label, default: []].count < Self.maxDistinct else { return Self.other }
            seen[label, default: []].insert(value)
            return value
        }
    }

    static func isIdentifier(_ value: String) -> Bool {
        guard !value.isEmpty, value.utf8.count <= maxLength else { return false }
        return value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"),
                 UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}

extension DeliveryStatus {
    /// The `status` label of `pushfleet_notifications_sent_total`:
    /// accepted, invalid_token, rejected, retry, parked, expired, dead_lettered,
    /// cancelled (statuses a send cannot produce become `other`).
    var sentLabel: String {
        switch self {
        case .accepted, .invalidToken, .rejected, .expired, .deadLettered, .parked, .cancelled: rawValue
        case .retrying: "retry"
        case .pending, .delivered, .opened: LabelBudget.other
        }
    }
}
