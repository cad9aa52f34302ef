import PushCore
import CRdKafka
import Foundation
import Logging

/// Idempotent Kafka producer (`enable.idempotence=true`, `acks=all`).
///
/// `send` returns once the delivery report for that message arrived, so a caller
/// knows the message is durably written (or gets the error). A dedicated thread serves
/// `rd_kafka_poll` for delivery reports; flush/metadata/close run on a second one.
///
/// After a fatal error (`KafkaError.isFatal`, `_FATAL`) this instance refuses new
/// messages: recreate the producer.
///
/// `@unchecked Sendable` is safe: the librdkafka producer API is thread-safe, the
/// handle is borrowed under `KafkaHandle`'s lock, and the remaining mutable state
/// (`stopping`, `closed`) is in `Locked` boxes.
public final class KafkaProducer: @unchecked Sendable {
    let handle: KafkaHandle
    let context: KafkaClientContext
    let logger: Logger
    private let pollThread: KafkaBlockingThread
    let controlThread: KafkaBlockingThread
    private let stopping = Locked(false)
    private let closed = Locked(false)

    /// Connects to `bootstrapServers`. `properties` override or add any librdkafka
    /// producer property (e.g. `linger.ms`, `message.timeout.ms`).
    public init(bootstrapServers: String, properties: [String: String] = [:], logger: Logger) throws {
        var all: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "enable.idempotence": "true",
            "acks": "all",
            "client.id": "pushkafka-producer",
        ]
        let (applicable, dropped) = KafkaPropertyScope.applicable(properties, producer: true)
        if !dropped.isEmpty {
            logger.debug("consumer-only kafka properties not passed to the producer", metadata: ["kafka.properties": "\(dropped)"])
        }
        all.merge(applicable) { _, override in override }
        let conf = try KafkaConf.make(all)
        let context = KafkaClientContext(logger: logger)
        let retained = installCommonCallbacks(on: conf, context: context)
        rd_kafka_conf_set_dr_msg_cb(conf) { _, message, _ in
            guard let message else { return }
            KafkaProducer.deliveryReport(message)
        }
        handle = try KafkaConf.newClient(type: RD_KAFKA_PRODUCER, conf: conf, context: retained)
        self.context = context
        self.logger = logger
        pollThread = KafkaBlockingThread(name: "kafka.prod.poll")
        controlThread = KafkaBlockingThread(name: "kafka.prod.ctl")
        pollThread.enqueue { [handle, stopping] in
            // Serve delivery reports and errors until the producer stops.
            while !stopping.withLock({ $0 }) {
                let alive = (try? handle.withHandle { rk in _ = rd_kafka_poll(rk, 100) }) != nil
                if !alive { break }
            }
        }
        pollThread.stop()  // ends the thread once the loop above returns
    }

    /// Waits until every queued message got its delivery report, or `timeout`.
    public func flush(timeout: Duration) async throws {
        try await controlThread.run { [handle] in
            let err = try handle.withHandle { rk in rd_kafka_flush(rk, timeout.kafkaMilliseconds) }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "flush") }
        }
    }

    /// Number of partitions of `topic` (cluster metadata), e.g. to compute lag.
    public func partitionCount(topic: String, timeout: Duration = .seconds(5)) async throws -> Int {
        try await controlThread.run { [handle] in
            try handle.withHandle { rk in
                try KafkaMetadata.partitionCount(rk: rk, topic: topic, timeoutMs: timeout.kafkaMilliseconds)
            }
        }
    }

    /// Flushes for at most `timeout`, fails whatever is still queued (their `send`
    /// calls throw `_PURGE_QUEUE`/`_PURGE_INFLIGHT`), then destroys the producer.
    public func close(timeout: Duration = .seconds(10)) async {
        guard closed.withLock({ was in defer { was = true }; return !was }) else { return }
        do {
            try await flush(timeout: timeout)
        } catch {
            logger.warning("Kafka producer flush on close incomplete", metadata: ["kafka.error": "\(error)"])
        }
        _ = try? await controlThread.run { [self] in self.shutdown() }
        controlThread.stop()
    }

    /// Stops polling, fails queued messages, destroys the handle.
    private func shutdown() {
        stopping.withLock { $0 = true }
        handle.destroy { rk in
            _ = rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
            // Serve the purge delivery reports so every waiting `send` resumes.
            _ = rd_kafka_flush(rk, 1000)
            rd_kafka_destroy(rk)
        }
    }

    deinit {
        shutdown()
        controlThread.stop()
    }
}

extension KafkaProducer {
    /// Test hook: raises librdkafka's test fatal error, exactly as a real fatal error of
    /// the idempotent producer would surface (error_cb with `_FATAL`).
    func triggerFatalErrorForTesting(reason: String) throws {
        let err = try handle.withHandle { rk in rd_kafka_test_fatal_error(rk, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, reason) }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err, "test fatal error") }
    }

    /// The fatal error this producer raised, if any; once set the producer must be recreated.
    public var fatalError: String? { context.fatalError.withLock { $0 } }
}
