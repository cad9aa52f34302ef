import CRdKafka

/// An error from librdkafka or from this wrapper's use of it.
///
/// `code` is always a native `rd_kafka_resp_err_t` value (wrapper-level failures use
/// librdkafka's own local codes such as `_INVALID_ARG` or `_STATE`), so callers can
/// match on it without importing `CRdKafka`.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// The raw `rd_kafka_resp_err_t` value.
    public var code: Int32
    /// librdkafka's symbolic name for `code`, e.g. `_QUEUE_FULL` or `NOT_COORDINATOR`.
    public var name: String
    /// A human-readable explanation (librdkafka's text plus our context).
    public var message: String
    /// Whether the same operation may succeed if tried again later.
    public var isRetriable: Bool
    /// Whether the client instance is unusable and must be recreated (e.g. `_FATAL` from
    /// the idempotent producer).
    public var isFatal: Bool
    /// Where in this module the error was raised.
    public var file: String
    /// The line in `file`.
    public var line: UInt

    public var description: String {
        "KafkaError(\(name) [\(code)]: \(message)\(isFatal ? ", fatal" : "")\(isRetriable ? ", retriable" : "") at \(file):\(line))"
    }

    /// True when the group is rebalancing (`REBALANCE_IN_PROGRESS`,
    /// `ILLEGAL_GENERATION`): a commit may succeed once the rebalance is served.
    public var isRebalanceInProgress: Bool {
        code == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS.rawValue || code == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION.rawValue
    }

    /// True when a commit was refused because the committer is not a current member of
    /// the group (`UNKNOWN_MEMBER_ID`, `ILLEGAL_GENERATION`, `REBALANCE_IN_PROGRESS`,
    /// `FENCED_INSTANCE_ID`): the group has members, or the broker wants members only.
    public var refusesSimpleCommit: Bool {
        isRebalanceInProgress || code == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID.rawValue
            || code == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID.rawValue
    }

    /// True for `MSG_SIZE_TOO_LARGE` (from the producer itself or from the broker).
    public var isMessageTooLarge: Bool { code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE.rawValue }

    /// True for `_PARTITION_EOF`, which only says a partition has been read to its end.
    public var isPartitionEOF: Bool { code == RD_KAFKA_RESP_ERR__PARTITION_EOF.rawValue }

    init(
        code: rd_kafka_resp_err_t, message: String, isRetriable: Bool? = nil, isFatal: Bool = false,
        file: String, line: UInt
    ) {
        self.code = code.rawValue
        self.name = String(cString: rd_kafka_err2name(code))
        self.message = message
        self.isRetriable = isRetriable ?? Self.retriableCodes.contains(code.rawValue)
        self.isFatal = isFatal || code == RD_KAFKA_RESP_ERR__FATAL
        self.file = file
        self.line = line
    }

    /// An error carrying a response code, with librdkafka's text for it unless `message` is given.
    static func rdKafka(
        _ code: rd_kafka_resp_err_t, _ message: String? = nil, isFatal: Bool = false,
        file: String = #fileID, line: UInt = #line
    ) -> KafkaError {
        let text = String(cString: rd_kafka_err2str(code))
        let full = message.map { "\($0): \(text)" } ?? text
        return KafkaError(code: code, message: full, isFatal: isFatal, file: file, line: line)
    }

    /// Takes ownership of an `rd_kafka_error_t` and destroys it.
    static func consuming(
        _ error: OpaquePointer, context: String, file: String = #fileID, line: UInt = #line
    ) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        let code = rd_kafka_error_code(error)
        let text = rd_kafka_error_string(error).map { String(cString: $0) } ?? ""
        return KafkaError(
            code: code, message: "\(context): \(text)",
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || retriableCodes.contains(code.rawValue),
            isFatal: rd_kafka_error_is_fatal(error) != 0, file: file, line: line)
    }

    /// A configuration property was rejected by librdkafka.
    static func config(key: String, _ detail: String, file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(
            code: RD_KAFKA_RESP_ERR__INVALID_ARG, message: "configuration property '\(key)': \(detail)",
            isRetriable: false, file: file, line: line)
    }

    /// Creating the client handle failed.
    static func creation(_ detail: String, file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(
            code: RD_KAFKA_RESP_ERR__INVALID_ARG, message: "rd_kafka_new: \(detail)", isRetriable: false,
            file: file, line: line)
    }

    /// The client was already closed or destroyed.
    static func closed(file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(
            code: RD_KAFKA_RESP_ERR__DESTROY, message: "client is closed", isRetriable: false, file: file,
            line: line)
    }

    /// The client raised a fatal error earlier; it must be recreated.
    static func fatal(_ reason: String, file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(
            code: RD_KAFKA_RESP_ERR__FATAL, message: reason, isRetriable: false, isFatal: true, file: file,
            line: line)
    }

    /// Codes for which trying again (later, or after a rebalance/leader change) is reasonable.
    static let retriableCodes: Set<Int32> = [
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__QUEUE_FULL, RD_KAFKA_RESP_ERR__WAIT_COORD,
        RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE, RD_KAFKA_RESP_ERR__RETRY, RD_KAFKA_RESP_ERR__PURGE_QUEUE,
        RD_KAFKA_RESP_ERR__PURGE_INFLIGHT, RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS,
        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR,
        RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH, RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH,
    ].reduce(into: Set<Int32>()) { $0.insert($1.rawValue) }
}
