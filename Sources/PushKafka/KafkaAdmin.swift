import CRdKafka
import Foundation
import Logging

/// A topic to create: name, partitions, replication factor and broker-side configs.
public struct KafkaTopicSpec: Sendable, Equatable {
    public var name: String
    public var partitions: Int32
    public var replicationFactor: Int32
    public var configs: [String: String]

    public init(name: String, partitions: Int32, replicationFactor: Int32, configs: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}

/// Topic administration through librdkafka's Admin API (`rd_kafka_CreateTopics`)
/// and cluster metadata, so an operator with only the `pushfleet` binary can
/// create the fleet's topics. Blocking calls run on a dedicated thread.
public final class KafkaAdmin: @unchecked Sendable {
    let handle: KafkaHandle
    private let thread = KafkaBlockingThread(name: "kafka.admin")

    public init(bootstrapServers: String, properties: [String: String] = [:], logger: Logger) throws {
        var all = ["bootstrap.servers": bootstrapServers, "client.id": "pushkafka-admin"]
        all.merge(KafkaPropertyScope.applicable(properties, producer: true).kept) { _, override in override }
        let conf = try KafkaConf.make(all)
        let retained = installCommonCallbacks(on: conf, context: KafkaClientContext(logger: logger, maxLogLevel: 4))
        handle = try KafkaConf.newClient(type: RD_KAFKA_PRODUCER, conf: conf, context: retained)
    }

    /// Every topic of the cluster with its partition count (one metadata request
    /// for all topics: asking for named topics could auto-create them).
    public func topics(timeout: Duration = .seconds(10)) async throws -> [String: Int] {
        try await thread.run { [handle] in
            try handle.withHandle { rk in
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let err = rd_kafka_metadata(rk, 1, nil, &metadata, timeout.kafkaMilliseconds)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw KafkaError.rdKafka(err, "cluster metadata") }
                defer { rd_kafka_metadata_destroy(metadata) }
                var result: [String: Int] = [:]
                guard let topics = metadata.pointee.topics else { return result }
                for i in 0..<Int(metadata.pointee.topic_cnt) {
                    let entry = topics[i]
                    guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = entry.topic else { continue }
                    result[String(cString: name)] = Int(entry.partition_cnt)
                }
                return result
            }
        }
    }

    /// Creates `specs`; the result names each topic's error, nil when created.
    /// - Throws: when the request as a whole fails (the cluster does not
    ///   support CreateTopics, timed out, an invalid spec).
    public func create(_ specs: [KafkaTopicSpec], timeout: Duration = .seconds(30)) async throws -> [String: String?] {
        guard !specs.isEmpty else { return [:] }
        return try await thread.run { [handle] in
            try handle.withHandle { rk in
                var errstr = [CChar](repeating: 0, count: 512)
                var newTopics: [OpaquePointer?] = []
                defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
                for spec in specs {
                    guard let topic = rd_kafka_NewTopic_new(spec.name, spec.partitions, spec.replicationFactor, &errstr, errstr.count) else {
                        throw KafkaError.config(key: spec.name, stringFromCBuffer(errstr))
                    }
                    newTopics.append(topic)
                    for (key, value) in spec.configs.sorted(by: { $0.key < $1.key }) {
                        let err = rd_kafka_NewTopic_set_config(topic, key, value)
                        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "config \(key)=\(value) of \(spec.name)") }
                    }
                }
                guard let queue = rd_kafka_queue_new(rk) else { throw KafkaError.creation("rd_kafka_queue_new returned NULL") }
                defer { rd_kafka_queue_destroy(queue) }
                let options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS)
                defer { rd_kafka_AdminOptions_destroy(options) }
                _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeout.kafkaMilliseconds, &errstr, errstr.count)
                _ = rd_kafka_AdminOptions_set_request_timeout(options, timeout.kafkaMilliseconds, &errstr, errstr.count)
                newTopics.withUnsafeMutableBufferPointer { buffer in
                    rd_kafka_CreateTopics(rk, buffer.baseAddress, buffer.count, options, queue)
                }
                guard let event = rd_kafka_queue_poll(queue, timeout.kafkaMilliseconds + 5_000) else {
                    throw KafkaError.rdKafka(RD_KAFKA_RESP_ERR__TIMED_OUT, "CreateTopics: no answer")
                }
                defer { rd_kafka_event_destroy(event) }
                let requestError = rd_kafka_event_error(event)
                guard requestError == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    let text = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? ""
                    throw KafkaError.rdKafka(requestError, "CreateTopics: \(text)")
                }
                guard let result = rd_kafka_event_CreateTopics_result(event) else {
                    throw KafkaError.rdKafka(RD_KAFKA_RESP_ERR__FAIL, "CreateTopics: not a CreateTopics result")
                }
                var count = 0
                guard let topics = rd_kafka_CreateTopics_result_topics(result, &count) else { return [:] }
                var outcome: [String: String?] = [:]
                for i in 0..<count {
                    guard let topic = topics[i], let name = rd_kafka_topic_result_name(topic) else { continue }
                    let err = rd_kafka_topic_result_error(topic)
                    let text = rd_kafka_topic_result_error_string(topic).map { String(cString: $0) } ?? String(cString: rd_kafka_err2str(err))
                    outcome[String(cString: name)] = err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : "\(String(cString: rd_kafka_err2name(err))): \(text)"
                }
                return outcome
            }
        }
    }

    public func close() async {
        _ = try? await thread.run { [handle] in handle.destroy { rd_kafka_destroy($0) } }
        thread.stop()
    }
}
