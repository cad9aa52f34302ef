import Foundation

/// One partition of one topic.
public struct KafkaTopicPartition: Sendable, Hashable, CustomStringConvertible {
    /// Topic name.
    public var topic: String
    /// Partition number within `topic`.
    public var partition: Int32

    /// Names a partition.
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// A consumed message, copied out of librdkafka's buffers.
public struct KafkaMessage: Sendable {
    /// Topic the message was read from.
    public var topic: String
    /// Partition the message was read from.
    public var partition: Int32
    /// Offset of this message; store `offset + 1` once it is processed.
    public var offset: Int64
    /// Message key, `nil` when the message has none.
    public var key: [UInt8]?
    /// Payload (empty for a null payload).
    public var value: [UInt8]
    /// Headers in wire order; a name may repeat.
    public var headers: [(name: String, value: [UInt8])]
    /// Create/append time set by the producer or broker, when known.
    public var timestamp: Date?

    /// What the message holds in memory, near enough: its key, value and headers.
    public var byteCount: Int {
        value.count + (key?.count ?? 0) + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.count }
    }

    /// Builds a message (mostly for tests and adapters).
    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8],
        headers: [(name: String, value: [UInt8])] = [], timestamp: Date? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// The partition this message came from.
    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The first header value named `name`, if any.
    public func header(_ name: String) -> [UInt8]? { headers.first { $0.name == name }?.value }
}

/// A change to this consumer's partition assignment, as told to the rebalance handler.
public enum KafkaRebalanceEvent: Sendable {
    /// These partitions were just added to the assignment.
    case assigned([KafkaTopicPartition])
    /// These partitions are about to be taken away in an orderly rebalance: finish or
    /// abandon in-flight work and store offsets now; they are committed before the
    /// partitions go.
    case revoked([KafkaTopicPartition])
    /// These partitions were lost (session timeout, fencing): another member may
    /// already own them, so offsets stored now may not be committed.
    case lost([KafkaTopicPartition])

    /// The partitions the event is about.
    public var partitions: [KafkaTopicPartition] {
        switch self {
        case .assigned(let p), .revoked(let p), .lost(let p): return p
        }
    }
}
