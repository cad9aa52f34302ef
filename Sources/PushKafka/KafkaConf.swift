import CRdKafka
import Foundation

/// Building `rd_kafka_conf_t` objects and client handles from string properties.
enum KafkaConf {
    /// A new conf with `properties` applied. The caller owns the result.
    static func make(_ properties: [String: String]) throws -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError.creation("rd_kafka_conf_new returned NULL")
        }
        var errstr = [CChar](repeating: 0, count: 512)
        // Sorted so that failures and logs are deterministic.
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errstr, errstr.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError.config(key: key, stringFromCBuffer(errstr))
            }
        }
        return conf
    }

    /// Creates a client from `conf`, which is consumed on success and destroyed on failure.
    /// `context` (one retain) is released on failure; on success it belongs to the result.
    static func newClient(
        type: rd_kafka_type_t, conf: OpaquePointer, context: Unmanaged<KafkaClientContext>
    ) throws -> KafkaHandle {
        var errstr = [CChar](repeating: 0, count: 512)
        guard let rk = rd_kafka_new(type, conf, &errstr, errstr.count) else {
            rd_kafka_conf_destroy(conf)
            context.release()
            throw KafkaError.creation(stringFromCBuffer(errstr))
        }
        return KafkaHandle(handle: rk, context: context)
    }
}

/// Conversions between Swift partition lists and `rd_kafka_topic_partition_list_t`.
enum KafkaPartitionList {
    typealias CList = UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// A new C list; destroy with `rd_kafka_topic_partition_list_destroy`.
    static func make(_ partitions: [KafkaTopicPartition], offsets: [Int64]? = nil) -> CList {
        // librdkafka allocates with rd_calloc, which aborts rather than return NULL.
        let list = rd_kafka_topic_partition_list_new(Int32(max(partitions.count, 1)))!
        for (index, tp) in partitions.enumerated() {
            let element = rd_kafka_topic_partition_list_add(list, tp.topic, tp.partition)
            if let offsets, index < offsets.count { element?.pointee.offset = offsets[index] }
        }
        return list
    }

    /// Runs `body` with a temporary C list built from `partitions`.
    static func with<R>(
        _ partitions: [KafkaTopicPartition], offsets: [Int64]? = nil, _ body: (CList) throws -> R
    ) rethrows -> R {
        let list = make(partitions, offsets: offsets)
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return try body(list)
    }

    /// Elements of a C list (not consumed).
    static func elements(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?)
        -> [(tp: KafkaTopicPartition, offset: Int64, err: rd_kafka_resp_err_t)]
    {
        guard let list, let elems = list.pointee.elems else { return [] }
        return (0..<Int(list.pointee.cnt)).map { index in
            let element = elems[index]
            let topic = element.topic.map { String(cString: $0) } ?? ""
            return (KafkaTopicPartition(topic: topic, partition: element.partition), element.offset, element.err)
        }
    }

    static func partitions(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [KafkaTopicPartition] {
        elements(list).map(\.tp)
    }

    /// The first per-partition error in a list, if any.
    static func firstError(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?)
        -> (KafkaTopicPartition, rd_kafka_resp_err_t)?
    {
        elements(list).first { $0.err != RD_KAFKA_RESP_ERR_NO_ERROR }.map { ($0.tp, $0.err) }
    }
}

extension Duration {
    /// Whole milliseconds, clamped to `Int32` for librdkafka timeouts.
    var kafkaMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, millis))
    }
}

/// The NUL-terminated text in a C error buffer.
func stringFromCBuffer(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// Which client type a librdkafka property applies to, as librdkafka itself
/// documents it (`rd_kafka_conf_properties_show`): `C` consumer only, `P`
/// producer only, `*` both. One `kafka.properties` map feeds a worker's
/// consumer and producer; each gets only what it knows, so neither logs
/// "… is a consumer property and will be ignored by this producer instance".
enum KafkaPropertyScope {
    /// Property name → `C`, `P` or `*`, read once from librdkafka's own table.
    static let table: [String: Character] = {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return [:] }
        rd_kafka_conf_properties_show(stream)
        fclose(stream)
        guard let buffer else { return [:] }
        defer { free(buffer) }
        var table: [String: Character] = [:]
        for line in String(cString: buffer).split(separator: "\n") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false)
            guard columns.count > 2 else { continue }
            let name = columns[0].trimmingCharacters(in: .whitespaces)
            let scope = columns[1].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, scope.count == 1, let c = scope.first, "CP*".contains(c) else { continue }
            table[name] = c
        }
        return table
    }()

    /// `properties` without those librdkafka documents for the other client
    /// type only; the dropped names are returned so the caller can say so.
    /// A name librdkafka does not list is kept (it will be refused with its own error).
    static func applicable(_ properties: [String: String], producer: Bool) -> (kept: [String: String], dropped: [String]) {
        let other: Character = producer ? "C" : "P"
        var kept: [String: String] = [:]
        var dropped: [String] = []
        for (key, value) in properties {
            if table[key] == other { dropped.append(key) } else { kept[key] = value }
        }
        return (kept, dropped.sorted())
    }
}
