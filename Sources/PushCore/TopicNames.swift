/// The fleet's Kafka topic names, all derived from one prefix: the one place
/// a topic's name is spelled. Workers, the receipts consumer, the producer
/// library, every command (`topics`, `dlq`, `skip`, `enqueue`), the demo and
/// the benchmark read their names here, so a prefix or a tier set is changed
/// in one place and every part agrees on it.
public struct TopicNames: Sendable {
    /// One lane's topics: where producers publish to it, its retry tiers, and
    /// where its held deliveries are parked.
    public struct LaneTopics: Sendable {
        public let lane: Lane
        /// Intake: one JSON notification per message, keyed by recipient.
        public let intake: String
        /// One topic per retry tier, each with one fixed delay, in tier order.
        public let retries: [(tier: RetryTier, topic: String)]
        /// Deliveries a provider could not take yet (open circuit, rate limit,
        /// no credential), keyed by app and provider, waiting until it can.
        public let parked: String

        init(lane: Lane, prefix: String, tiers: [RetryTier]) {
            self.lane = lane
            intake = "\(prefix).notifications" + lane.topicSuffix
            retries = tiers.map { ($0, TopicNames.retryTopic(prefix: prefix, tierName: $0.name, lane: lane)) }
            parked = "\(prefix).parked" + lane.topicSuffix
        }

        /// The topic of `tier`; the last tier's for a tier this set does not have.
        public func retryTopic(for tier: RetryTier) -> String {
            retries.first(where: { $0.tier == tier })?.topic ?? retries.last?.topic ?? parked
        }

        /// Every retry topic, in tier order.
        public var retryTopics: [String] { retries.map(\.topic) }

        /// The lane's notification topics: intake, retry tiers, parked.
        public var all: [String] { [intake] + retryTopics + [parked] }
    }

    /// The prefix every name starts with (`push` unless configured).
    public let prefix: String
    /// Transactional traffic: `push.notifications`, `push.retry.<tier>`, `push.parked`.
    public let interactive: LaneTopics
    /// Campaigns: `push.notifications.bulk`, `push.retry.<tier>.bulk`, `push.parked.bulk`.
    public let bulk: LaneTopics
    /// Exhausted or undecodable messages of both lanes, with the reason in headers.
    public let deadLetter: String
    /// Device registrations and removals (compacted).
    public let devices: String
    /// Device receipts (`delivered`, `opened`) from product services.
    public let receipts: String

    /// The prefix used when none is configured.
    public static let defaultPrefix = "push"

    public init(prefix: String = defaultPrefix, tiers: [RetryTier] = RetryTier.defaults) {
        self.prefix = prefix
        interactive = LaneTopics(lane: .interactive, prefix: prefix, tiers: tiers)
        bulk = LaneTopics(lane: .bulk, prefix: prefix, tiers: tiers)
        deadLetter = "\(prefix).dlq"
        devices = "\(prefix).devices"
        receipts = "\(prefix).receipts"
    }

    /// The topic of the retry tier named `tierName` in `lane` (for tools that
    /// know a tier by its name only, as `pushfleet topics create`).
    public static func retryTopic(prefix: String, tierName: String, lane: Lane = .interactive) -> String {
        "\(prefix).retry.\(tierName)" + lane.topicSuffix
    }

    public func topics(of lane: Lane) -> LaneTopics {
        switch lane {
        case .interactive: interactive
        case .bulk: bulk
        }
    }

    /// The interactive lane's intake: where a producer publishes by default.
    public var intake: String { interactive.intake }

    /// The lane whose notification topics hold `topic`, nil for any other topic.
    public func lane(of topic: String) -> Lane? {
        Lane.allCases.first { topics(of: $0).all.contains(topic) }
    }

    /// The tier whose topic (in either lane) `topic` is, nil for any other topic.
    public func retryTier(of topic: String) -> RetryTier? {
        for lane in Lane.allCases {
            if let tier = topics(of: lane).retries.first(where: { $0.topic == topic })?.tier { return tier }
        }
        return nil
    }

    public func isRetryTopic(_ topic: String) -> Bool { retryTier(of: topic) != nil }

    /// A parked topic of either lane.
    public func isParkedTopic(_ topic: String) -> Bool { topic == interactive.parked || topic == bulk.parked }

    /// Every retry topic of both lanes.
    public var retryTopics: [String] { interactive.retryTopics + bulk.retryTopics }

    /// What a lane's consumer takes: its notification topics, and for the
    /// interactive lane the device events too (registrations are small and
    /// must never wait behind a campaign).
    public func consumed(by lane: Lane) -> [String] {
        topics(of: lane).all + (lane == .interactive ? [devices] : [])
    }

    /// Every topic the fleet uses, in creation order.
    public var all: [String] { interactive.all + bulk.all + [deadLetter, receipts, devices] }
}
