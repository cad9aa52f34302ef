/// Settings for tests against librdkafka's mock cluster.
package enum KafkaTestSettings {
    /// Consumer settings that keep the mock cluster's rebalances quick.
    package static let fastGroup: [String: String] = [
        "session.timeout.ms": "3000",
        "heartbeat.interval.ms": "300",
        "fetch.wait.max.ms": "50",
        "topic.metadata.refresh.interval.ms": "2000",
    ]
}
