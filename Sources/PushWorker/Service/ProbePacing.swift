import Foundation

/// Parked messages of a party whose circuit is not closed go one per second:
/// the first is the breaker's probe, and the rest wait for its answer instead
/// of all being refused and parked again. Without it every held delivery would
/// be re-parked once per cool-down; with it, one per party. Pure state, kept by
/// each lane's poll loop.
struct ProbePacing {
    /// How long the others wait after a party's probe before they are looked at again.
    static let spacing: TimeInterval = 1

    /// Per recovering party, when its last parked message was let through.
    private(set) var lastLetThrough: [HeldParty: Date] = [:]

    /// When a due parked message of `party` may go (nil: now). `recovering`:
    /// the party's circuit is not closed.
    mutating func due(for party: HeldParty, recovering: Bool, now: Date) -> Date? {
        guard recovering else {
            lastLetThrough[party] = nil
            return nil
        }
        if let last = lastLetThrough[party], now < last.addingTimeInterval(Self.spacing) {
            return last.addingTimeInterval(Self.spacing)
        }
        lastLetThrough[party] = now
        return nil
    }
}
