/// An intake lane: notifications of one urgency, on topics of their own
/// (intake, retry tiers, parked), consumed by a consumer of their own, so
/// one lane's backlog never queues the other's messages.
public enum Lane: String, Sendable, CaseIterable, Hashable {
    /// Transactional pushes, one-time codes, chat: served first.
    case interactive
    /// Campaigns: served with the capacity the interactive lane leaves, and
    /// never less than a floor, so a campaign always makes progress.
    case bulk

    /// Whether the lane's work lets the other lane's go first wherever the
    /// two wait together: a provider host's stream slots
    /// (`HTTPRequestPriority.background`) and PostgreSQL connections (its
    /// batches run at task priority `.low`). The bulk lane does.
    public var yieldsToOtherLanes: Bool { self == .bulk }

    /// What the lane's topic names end with: nothing for the interactive
    /// lane (`push.notifications`, where every producer publishes unless it
    /// chooses the bulk lane), `.bulk` for bulk.
    var topicSuffix: String {
        switch self {
        case .interactive: ""
        case .bulk: ".bulk"
        }
    }
}
