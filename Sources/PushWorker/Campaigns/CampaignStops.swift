import Foundation
import PushCore

/// The campaigns cancelled fleet-wide, as this worker last read them from
/// `campaign_cancellations` (each second: `PushWorkerService+Campaigns`), and
/// a `SendGate` per campaign with deliveries in flight here, closed while its
/// campaign is cancelled.
///
/// The batch pipeline takes a message's gate when it decides the message: a
/// closed one makes its deliveries `cancelled` rows without a request; the
/// sends hand it to the provider clients, which look at it right before a
/// request goes (after any wait for a rate-limit slot or a token), so the
/// sends of a part decided just before the cancel stop too; and a delivery
/// that failed or could not be sent meanwhile ends `cancelled` instead of
/// going to a retry tier or a parked topic.
public final class CampaignStops: Sendable {
    /// An open cancellation.
    public struct Stop: Sendable, Equatable {
        public var reason: String?
        public var by: String
        public var at: Date

        public init(reason: String?, by: String, at: Date) {
            self.reason = reason
            self.by = by
            self.at = at
        }

        /// The `detail` of a delivery row the cancellation ends: who, when, why.
        public func detail(campaign: String) -> String {
            var text = "campaign \(campaign) cancelled by \(by) at \(Timestamps.format(at))"
            if let reason, !reason.isEmpty { text += ": " + reason }
            return text
        }
    }

    /// The `provider_reason` of a delivery a cancellation ends.
    public static let cancelledReason = "CampaignCancelled"
    /// How often a worker reads the cancellations again: a cancel reaches
    /// every worker within about this long (plus one query).
    public static let refreshInterval: Duration = .seconds(1)

    private struct State {
        var stops: [String: Stop] = [:]
        var gates: [String: SendGate] = [:]
        var loaded = false
    }

    private let state = Locked(State())

    public init() {}

    /// Whether the cancellations were read at least once. A worker reads them
    /// before its first batch, so one started after a cancel honours it.
    public var isLoaded: Bool { state.withLock { $0.loaded } }

    /// The open cancellation of `campaign`, if any.
    public func stop(for campaign: String) -> Stop? {
        state.withLock { $0.stops[campaign] }
    }

    /// The gate of `campaign`'s sends, closed while it is cancelled; nil for
    /// no campaign (a notification without one is never stopped this way).
    func gate(for campaign: String?) -> SendGate? {
        guard let campaign else { return nil }
        return state.withLock { state in
            if let gate = state.gates[campaign] { return gate }
            let gate = SendGate(closedBecause: state.stops[campaign]?.detail(campaign: campaign))
            state.gates[campaign] = gate
            return gate
        }
    }

    /// Takes `stops` (every open cancellation) as the truth: closes the
    /// gates of campaigns cancelled since, opens those of campaigns resumed,
    /// and forgets the gates no message in flight holds any more. Returns the
    /// campaigns cancelled and resumed by the change.
    @discardableResult
    func replace(with stops: [String: Stop]) -> (cancelled: [String], resumed: [String]) {
        state.withLock { state in
            let cancelled = stops.filter { state.stops[$0.key] != $0.value }.keys.sorted()
            let resumed = state.stops.keys.filter { stops[$0] == nil }.sorted()
            state.stops = stops
            state.loaded = true
            for campaign in Array(state.gates.keys) {
                guard var gate = state.gates.removeValue(forKey: campaign) else { continue }
                // Only the table held it: no message in flight has this campaign.
                if stops[campaign] == nil, isKnownUniquelyReferenced(&gate) { continue }
                if let stop = stops[campaign] { gate.close(because: stop.detail(campaign: campaign)) } else { gate.open() }
                state.gates[campaign] = gate
            }
            return (cancelled, resumed)
        }
    }

    /// How many gates are kept (campaigns of messages in flight, and cancelled ones).
    var gateCount: Int { state.withLock { $0.gates.count } }
}
