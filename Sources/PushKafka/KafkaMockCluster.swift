import CRdKafka
import Logging
import PushCore

/// librdkafka's mock cluster: an in-process, multi-broker Kafka cluster that speaks the
/// real protocol over TCP on 127.0.0.1 (dev and tests). Other clients, in this process
/// or others, connect to `bootstrapServers` like to any cluster.
///
/// Limits (librdkafka 2.0.2): it keeps only a few MiB per partition and silently drops
/// older data; there is no replication of data between brokers.
///
/// `@unchecked Sendable` is safe: the mock cluster API is thread-safe (each call is
/// an operation handed to the cluster's own thread), the pointers never change after
/// `init`, and they are freed only in `deinit`, when no other reference exists.
public final class KafkaMockCluster: @unchecked Sendable {
    /// The client handle that owns the mock cluster (librdkafka requires one).
    private let owner: KafkaHandle
    private let cluster: OpaquePointer
    private let logger: Logger

    /// Comma-separated `host:port` list of the brokers.
    public let bootstrapServers: String
    /// Number of brokers; broker ids are `1...brokerCount`.
    public let brokerCount: Int

    /// Starts a cluster of `brokers` brokers on ephemeral loopback ports.
    public init(brokers: Int = 3, logger: Logger) throws {
        self.logger = logger
        let conf = try KafkaConf.make(["client.id": "pushkafka-mock-owner"])
        // Warnings and errors only: the owner has no bootstrap servers and would say so.
        let context = installCommonCallbacks(on: conf, context: KafkaClientContext(logger: logger, maxLogLevel: 4))
        owner = try KafkaConf.newClient(type: RD_KAFKA_PRODUCER, conf: conf, context: context)
        let created = try owner.withHandle { rk in rd_kafka_mock_cluster_new(rk, Int32(brokers)) }
        guard let created, let bootstraps = rd_kafka_mock_cluster_bootstraps(created) else {
            if let created { rd_kafka_mock_cluster_destroy(created) }
            owner.destroy { rd_kafka_destroy($0) }
            throw KafkaError.creation("rd_kafka_mock_cluster_new(\(brokers) brokers) failed")
        }
        cluster = created
        brokerCount = brokers
        bootstrapServers = String(cString: bootstraps)
        logger.info(
            "Kafka mock cluster started",
            metadata: ["kafka.bootstrap_servers": "\(bootstrapServers)", "kafka.brokers": "\(brokers)"])
    }

    /// Creates `name` with `partitions` partitions (leaders spread over the brokers).
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws {
        let err = rd_kafka_mock_topic_create(cluster, name, partitions, replicationFactor)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "create topic \(name)") }
    }

    /// Creates the fleet's topics: the intake with `intakePartitions`, every
    /// other topic (retry tiers, dead letters, devices, receipts) with `partitions`.
    public func createFleetTopics(_ topics: TopicNames, intakePartitions: Int32, partitions: Int32 = 3) throws {
        try createTopic(topics.intake, partitions: intakePartitions)
        for topic in topics.retryTopics + [topics.deadLetter, topics.devices, topics.receipts] {
            try createTopic(topic, partitions: partitions)
        }
    }

    /// Makes broker `brokerID` drop its connections and refuse new ones.
    public func setBrokerDown(_ brokerID: Int32) throws {
        let err = rd_kafka_mock_broker_set_down(cluster, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "broker \(brokerID) down") }
    }

    /// Lets broker `brokerID` accept connections again.
    public func setBrokerUp(_ brokerID: Int32) throws {
        let err = rd_kafka_mock_broker_set_up(cluster, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "broker \(brokerID) up") }
    }

    /// Moves the leadership of one partition to `brokerID` (fault injection).
    public func setPartitionLeader(_ tp: KafkaTopicPartition, brokerID: Int32) throws {
        let err = rd_kafka_mock_partition_set_leader(cluster, tp.topic, tp.partition, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "leader of \(tp)") }
    }

    deinit {
        // The cluster must go before the handle that owns it.
        rd_kafka_mock_cluster_destroy(cluster)
        owner.destroy { rd_kafka_destroy($0) }
        logger.debug("Kafka mock cluster stopped", metadata: ["kafka.bootstrap_servers": "\(bootstrapServers)"])
    }
}
