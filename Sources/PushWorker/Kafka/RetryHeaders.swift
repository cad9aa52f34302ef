import Foundation
import PushCore
import PushKafka

/// The headers PushFleet puts on retry and dead-letter messages: which
/// attempt comes next, when it is due, when the first failure was, the last
/// error, and where the message originally came from.
public struct RetryHeaders: Sendable, Equatable {
    /// The headers that steer a retry or name an origin: honoured only on
    /// the retry topics (see `IntakeDecoder.trustedHeaders`).
    public static let steeringKeys: Set<String> = [
        attemptKey, dueAtKey, firstFailureAtKey, lastErrorKey, originTopicKey, originPartitionKey, originOffsetKey, reasonKey,
    ]
    public static let attemptKey = "pushfleet-attempt"
    public static let dueAtKey = "pushfleet-due-at"
    public static let firstFailureAtKey = "pushfleet-first-failure-at"
    public static let lastErrorKey = "pushfleet-last-error"
    public static let originTopicKey = "pushfleet-origin-topic"
    public static let originPartitionKey = "pushfleet-origin-partition"
    public static let originOffsetKey = "pushfleet-origin-offset"
    public static let reasonKey = "pushfleet-dlq-reason"
    /// On a dead letter whose body is not the original message: what was cut
    /// and where the original is.
    public static let bodyKey = "pushfleet-dlq-body"

    /// The latest time a header may carry: 9999-12-31T23:59:59.999Z in milliseconds.
    static let maxMillis: Int64 = 253_402_300_799_999
    /// The highest attempt number read from a header (far above any `retry.max_attempts`).
    static let maxAttempt = 1_000

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
    public init(message: KafkaMessage) { self.init(message: message, attempt: Self.readableAttempt(of: message)) }

    /// As `init(message:)`, with its `readableAttempt` already read.
    init(message: KafkaMessage, attempt readable: Int?) {
        func text(_ key: String) -> String? { message.header(key).map { String(decoding: $0, as: UTF8.self) } }
        // Bounded: a header is bytes anyone with produce rights can write, and an
        // attempt number or a time feeds arithmetic (next attempt, due time).
        func millis(_ key: String) -> Date? {
            text(key).flatMap(Int64.init).flatMap { (0...Self.maxMillis).contains($0) ? Date(timeIntervalSince1970: Double($0) / 1000) : nil }
        }
        attempt = readable.map { min($0, Self.maxAttempt) } ?? 1
        dueAt = millis(Self.dueAtKey)
        firstFailureAt = millis(Self.firstFailureAtKey)
        // Texts cut as they are written (a header of a megabyte would ride on
        // every retry and dead letter after it), and an origin topic only when
        // it is a Kafka topic name: it becomes `intake_rejections.kafka_topic`,
        // a key of a unique index, when a dead letter is refused.
        lastError = text(Self.lastErrorKey).map { BoundedText.cut($0, maxBytes: Self.maxLastErrorBytes) }
        originTopic = text(Self.originTopicKey).flatMap { Self.isTopicName($0) ? $0 : nil }
        originPartition = text(Self.originPartitionKey).flatMap(Int32.init)
        originOffset = text(Self.originOffsetKey).flatMap(Int64.init)
        reason = text(Self.reasonKey).map { BoundedText.cut($0, maxBytes: Self.maxReasonBytes) }
    }

    /// `pushfleet-last-error` is kept to this many UTF-8 bytes.
    static let maxLastErrorBytes = 500
    /// `pushfleet-dlq-reason` is kept to this many UTF-8 bytes.
    static let maxReasonBytes = 1000

    /// Kafka's rule for a topic name: 1 to 249 of `[a-zA-Z0-9._-]`.
    static func isTopicName(_ name: String) -> Bool {
        (1...249).contains(name.utf8.count) && name.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
    }

    /// The message's `pushfleet-attempt` as written, when it is a whole number
    /// of at least 1 (a worker writes nothing else); nil when it is absent,
    /// not a number, past `Int` or below 1. Not yet bounded by `maxAttempt`.
    static func readableAttempt(of message: KafkaMessage) -> Int? {
        message.header(attemptKey).flatMap { Int(String(decoding: $0, as: UTF8.self)) }.flatMap { $0 >= 1 ? $0 : nil }
    }

    /// Kafka headers for a produced message.
    public var kafkaHeaders: [(name: String, value: [UInt8])] {
        var out: [(name: String, value: [UInt8])] = [(Self.attemptKey, Array(String(attempt).utf8))]
        func millis(_ d: Date) -> [UInt8] {
            let ms = (d.timeIntervalSince1970 * 1000).rounded()
            return Array(String(Int64(exactly: min(max(ms, 0), Double(Self.maxMillis))) ?? 0).utf8)
        }
        if let dueAt { out.append((Self.dueAtKey, millis(dueAt))) }
        if let firstFailureAt { out.append((Self.firstFailureAtKey, millis(firstFailureAt))) }
        if let lastError { out.append((Self.lastErrorKey, Array(BoundedText.cut(lastError, maxBytes: Self.maxLastErrorBytes).utf8))) }
        if let originTopic { out.append((Self.originTopicKey, Array(originTopic.utf8))) }
        if let originPartition { out.append((Self.originPartitionKey, Array(String(originPartition).utf8))) }
        if let originOffset { out.append((Self.originOffsetKey, Array(String(originOffset).utf8))) }
        if let reason { out.append((Self.reasonKey, Array(BoundedText.cut(reason, maxBytes: Self.maxReasonBytes).utf8))) }
        return out
    }

    /// The message these headers trace back to, when all three origin headers are set.
    var origin: MessageOrigin? {
        guard let originTopic, let originPartition, let originOffset else { return nil }
        return MessageOrigin(topic: originTopic, partition: originPartition, offset: originOffset)
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
