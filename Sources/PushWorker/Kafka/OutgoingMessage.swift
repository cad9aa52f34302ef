import Foundation

/// A message the worker must get durably into Kafka before it may store the
/// offset of the message it came from.
struct OutgoingMessage: Sendable {
    var topic: String
    var key: [UInt8]?
    var value: [UInt8]
    var headers: [(name: String, value: [UInt8])]
    /// For counters: the retry tier name, or the dead-letter category
    /// (`exhausted`, an intake reason, `response_lost`, `produce_failed`).
    var label: String = ""
    /// The consumed message this one stands for (rejection rows name it).
    var origin: MessageOrigin? = nil
    /// The notification it carries, when known (a retry message rerouted to
    /// the DLQ moves its ledger rows to `dead_lettered`).
    var notificationID: UUID? = nil
}
