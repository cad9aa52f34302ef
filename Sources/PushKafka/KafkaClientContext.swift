import PushCore
import CRdKafka
import Foundation
import Logging

/// State that librdkafka's callbacks need. One instance per `rd_kafka_t`, installed as
/// the conf opaque through `Unmanaged.passRetained` and released by `KafkaHandle`
/// after the handle is destroyed (or on the failure path of client creation).
///
/// `@unchecked Sendable` is safe: `logger`/`clientName` are immutable and all mutable
/// state lives in `Locked` boxes.
final class KafkaClientContext: @unchecked Sendable {
    let logger: Logger
    /// Lowest syslog level forwarded to `logger` (librdkafka: 0 emerg … 7 debug).
    let maxLogLevel: Int32
    /// First fatal error reported through `error_cb`, if any.
    let fatalError = Locked<String?>(nil)
    /// Rebalance handler of a consumer.
    let rebalanceHandler = Locked<(@Sendable (KafkaRebalanceEvent) -> Void)?>(nil)
    /// Partitions that the application paused and has not resumed.
    let paused = Locked<Set<KafkaTopicPartition>>([])
    /// Whether librdkafka ever called the rebalance callback with an assignment
    /// (then the assignor has its state and the consumer may be closed and destroyed).
    let everAssigned = Locked(false)
    /// Offsets stored with `storeOffsets` for assigned partitions, committed
    /// synchronously when those partitions are revoked.
    let storedOffsets = Locked<[KafkaTopicPartition: Int64]>([:])

    init(logger: Logger, maxLogLevel: Int32 = 7) {
        self.logger = logger
        self.maxLogLevel = maxLogLevel
    }

    /// The context installed on `rk`, without touching its retain count.
    static func of(_ rk: OpaquePointer?) -> KafkaClientContext? {
        guard let rk, let opaque = rd_kafka_opaque(rk) else { return nil }
        return Unmanaged<KafkaClientContext>.fromOpaque(opaque).takeUnretainedValue()
    }

    func log(level: Int32, facility: String, text: String, client: String) {
        guard level <= maxLogLevel else { return }
        let metadata: Logger.Metadata = [
            "kafka.facility": "\(facility)", "kafka.client": "\(client)", "kafka.syslog_level": "\(level)",
        ]
        // Connection failures are also reported (once) through error_cb: keep them out of error level.
        let level = facility == "FAIL" ? max(level, 4) : level
        switch level {
        case ...2: logger.critical("\(text)", metadata: metadata)
        case 3: logger.error("\(text)", metadata: metadata)
        case 4: logger.warning("\(text)", metadata: metadata)
        case 5: logger.notice("\(text)", metadata: metadata)
        case 6: logger.info("\(text)", metadata: metadata)
        default: logger.debug("\(text)", metadata: metadata)
        }
    }
}

/// Installs the log and error callbacks and `context` as opaque on `conf`.
/// Returns the retained context; the caller must balance it on every path.
func installCommonCallbacks(on conf: OpaquePointer, context: KafkaClientContext) -> Unmanaged<KafkaClientContext> {
    let retained = Unmanaged.passRetained(context)
    rd_kafka_conf_set_opaque(conf, retained.toOpaque())
    rd_kafka_conf_set_log_cb(conf) { rk, level, fac, buf in
        guard let context = KafkaClientContext.of(rk) else { return }
        let name = rk.flatMap { rd_kafka_name($0) }.map { String(cString: $0) } ?? "rdkafka"
        context.log(
            level: level, facility: fac.map { String(cString: $0) } ?? "",
            text: buf.map { String(cString: $0) } ?? "", client: name)
    }
    rd_kafka_conf_set_error_cb(conf) { rk, err, reason, _ in
        guard let context = KafkaClientContext.of(rk) else { return }
        let text = reason.map { String(cString: $0) } ?? ""
        var metadata: Logger.Metadata = [
            "kafka.error": "\(String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(err))))",
        ]
        if err == RD_KAFKA_RESP_ERR__FATAL.rawValue, let rk {
            var buffer = [CChar](repeating: 0, count: 512)
            let underlying = rd_kafka_fatal_error(rk, &buffer, buffer.count)
            let detail = stringFromCBuffer(buffer)
            metadata["kafka.fatal_error"] = "\(String(cString: rd_kafka_err2name(underlying)))"
            context.fatalError.withLock { if $0 == nil { $0 = detail.isEmpty ? text : detail } }
            context.logger.error("fatal Kafka client error: \(detail)", metadata: metadata)
        } else if err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue || err == RD_KAFKA_RESP_ERR__TRANSPORT.rawValue {
            context.logger.warning("Kafka connectivity: \(text)", metadata: metadata)
        } else {
            context.logger.error("Kafka client error: \(text)", metadata: metadata)
        }
    }
    return retained
}
