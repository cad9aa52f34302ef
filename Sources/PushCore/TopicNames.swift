/// The fleet's Kafka topic names, all derived from one prefix: the one place
/// a topic's name is spelled. Workers, the receipts consumer, the producer
/// library, every command (`topics`, `dlq`, `skip`, `enqueue`), the demo and
/// the benchmark read their names here, so a prefix or a tier set is changed
/// in one place and every part agrees on it.
public struct TopicNames: Sendable {
    /// The prefix every name starts with (`push` unless configured).
    public let prefix: String
    /// Intake: one JSON notification per message, keyed by recipient.
    public let intake: String
    /// One topic per retry tier, each with one fixed delay, in tier order.
    public let retries: [(tier: RetryTier, topic: String)]
    /// Exhausted or undecodable messages, with the reason in headers.
    public let deadLetter: String
    /// Device registrations and removals (compacted).
    public let devices: String
    /// Device receipts (`delivered`, `opened`) from product services.
    public let receipts: String

    /// The prefix used when none is configured.
    public static let defaultPrefix = "push"

    public init(prefix: String = defaultPrefix, tiers: [RetryTier] = RetryTier.defaults) {
        self.prefix = prefix
        intake = "\(prefix).notifications"
        retries = tiers.map { ($0, Self.retryTopic(prefix: prefix, tierName: $0.name)) }
        deadLetter = "\(prefix).dlq"
        devices = "\(prefix).devices"
        receipts = "\(prefix).receipts"
    }

    /// The topic of the retry tier named `tierName` (for tools that know a
    /// tier by its name only, as `pushfleet topics create`).
    public static func retryTopic(prefix: String, tierName: String) -> String { "\(prefix).retry.\(tierName)" }

    /// The topic of `tier`; the last tier's for a tier this set does not have.
    public func retryTopic(for tier: RetryTier) -> String {
        retries.first(where: { $0.tier == tier })?.topic ?? retries.last?.topic ?? deadLetter
    }

    /// The tier whose topic `topic` is, nil for any other topic.
    public func retryTier(of topic: String) -> RetryTier? {
        retries.first(where: { $0.topic == topic })?.tier
    }

    public func isRetryTopic(_ topic: String) -> Bool { retryTier(of: topic) != nil }

    /// Every retry topic, in tier order.
    public var retryTopics: [String] { retries.map(\.topic) }

    /// What a worker consumes in the group: intake, every retry tier, device events.
    public var consumed: [String] { [intake] + retryTopics + [devices] }
}
