import Foundation
import PushCore

/// Whose sends are held back together: one app on one provider (for Web
/// Push, on one push service). One party's trouble (an outage, a rate limit,
/// a credential that cannot be had) parks only its own deliveries.
public struct HeldParty: Sendable, Hashable {
    public var provider: Provider
    public var app: String
    /// The Web Push push service (`https://updates.push.services.mozilla.com`), nil for the others.
    public var host: String?

    /// The longest push-service name a parked message carries (a URL origin).
    static let maxHostBytes = 300

    /// The parked message's Kafka key: one party's parked messages share a
    /// partition, in the order they were parked.
    var kafkaKey: [UInt8] { Array("\(provider.rawValue)/\(app)\(host.map { "/" + $0 } ?? "")".utf8) }
}
