import Foundation
import PushCore
import PushKafka

/// The headers PushFleet puts on retry and dead-letter messages: which
/// attempt comes next, when it is due, when the first failure was, the last
/// error, and where the message originally came from.
public struct RetryHeaders: Sendable, Equatable {
    public static let attemptKey = "pushfleet-attempt"
    public static let dueAtKey = "pushfleet-due-at"
    public static let firstFailureAtKey = "pushfleet-first-failure-at"
    public static let lastErrorKey = "pushfleet-last-error"
    public static let originTopicKey = "pushfleet-origin-topic"
    public static let originPartitionKey = "pushfleet-origin-partition"
    public static let originOffsetKey = "pushfleet-origin-offset"
    public static let reasonKey = "pushfleet-dlq-reason"

    /// The attempt number the message's next send will be (1 on intake).
    public var attempt = 1
    public var dueAt: Date?
    public var firstFailureAt: Date?
    public var lastError: String?
    public var originTopic: String?
    public var originPartition: Int32?
    public var originOffset: Int64?
    /// Why a message was dead-lettered.
    public var reason: String?

    public init() {}

    /// Reads the headers of a consumed message; missing or malformed values stay nil.
    public init(message: KafkaMessage) {
        func text(_ key: String) -> String? { message.header(key).map { String(decoding: $0, as: UTF8.self) } }
        func millis(_ key: String) -> Date? { text(key).flatMap(Int64.init).map { Date(timeIntervalSince1970: Double($0) / 1000) } }
        attempt = text(Self.attemptKey).flatMap(Int.init).map { max(1, $0) } ?? 1
        dueAt = millis(Self.dueAtKey)
        firstFailureAt = millis(Self.firstFailureAtKey)
        lastError = text(Self.lastErrorKey)
        originTopic = text(Self.originTopicKey)
        originPartition = text(Self.originPartitionKey).flatMap(Int32.init)
        originOffset = text(Self.originOffsetKey).flatMap(Int64.init)
        reason = text(Self.reasonKey)
    }

    /// Kafka headers for a produced message.
    public var kafkaHeaders: [(name: String, value: [UInt8])] {
        var out: [(name: String, value: [UInt8])] = [(Self.attemptKey, Array(String(attempt).utf8))]
        func millis(_ d: Date) -> [UInt8] { Array(String(Int64((d.timeIntervalSince1970 * 1000).rounded())).utf8) }
        if let dueAt { out.append((Self.dueAtKey, millis(dueAt))) }
        if let firstFailureAt { out.append((Self.firstFailureAtKey, millis(firstFailureAt))) }
        if let lastError { out.append((Self.lastErrorKey, Array(lastError.prefix(500).utf8))) }
        if let originTopic { out.append((Self.originTopicKey, Array(originTopic.utf8))) }
        if let originPartition { out.append((Self.originPartitionKey, Array(String(originPartition).utf8))) }
        if let originOffset { out.append((Self.originOffsetKey, Array(String(originOffset).utf8))) }
        if let reason { out.append((Self.reasonKey, Array(reason.prefix(1000).utf8))) }
        return out
    }

    /// Origin headers for a message consumed at `message`, keeping an earlier origin.
    mutating func setOrigin(from message: KafkaMessage) {
        if originTopic == nil {
            originTopic = message.topic
            originPartition = message.partition
            originOffset = message.offset
        }
    }
}

/// A message the worker must get durably into Kafka before it may store the
/// offset of the message it came from.
struct OutgoingMessage: Sendable {
    var topic: String
    var key: [UInt8]?
    var value: [UInt8]
    var headers: [(name: String, value: [UInt8])]
    /// For counters: the retry tier name, or the dead-letter category
    /// (`exhausted`, `invalid`, `undecodable`, `unsupported_schema_version`, `response_lost`).
    var label: String = ""
}

/// The worker's topic names, from the configured prefix.
struct TopicNames: Sendable {
    var intake: String
    var retries: [(tier: RetryTier, topic: String)]
    var deadLetter: String
    /// Device registry messages (register / unregister).
    var devices: String

    init(prefix: String, tiers: [RetryTier]) {
        intake = "\(prefix).notifications"
        devices = "\(prefix).devices"
        retries = tiers.map { ($0, "\(prefix).retry.\($0.name)") }
        deadLetter = "\(prefix).dlq"
    }

    func retryTopic(for tier: RetryTier) -> String {
        retries.first(where: { $0.tier == tier })?.topic ?? retries.last?.topic ?? deadLetter
    }

    func isRetryTopic(_ topic: String) -> Bool { retries.contains { $0.topic == topic } }

    var consumed: [String] { [intake] + retries.map(\.topic) + [devices] }
}
