import CRdKafka
import Foundation

extension KafkaMessage {
    /// Copies a successfully consumed `rd_kafka_message_t` (does not destroy it).
    init(copying message: UnsafeMutablePointer<rd_kafka_message_t>) {
        var names = TopicNameCache()
        self.init(copying: message, names: &names)
    }

    /// A copy whose topic name shares the previous message's `String` when the
    /// name's bytes are the same (one poll's messages mostly come from one or
    /// two topics): no allocation and UTF-8 check of the name per message.
    init(copying message: UnsafeMutablePointer<rd_kafka_message_t>, names: inout TopicNameCache) {
        let m = message.pointee
        let topic = m.rkt.flatMap { rd_kafka_topic_name($0) }.map { names.name($0) } ?? ""
        let key = m.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.key_len)) }
        let value = m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.len)) } ?? []
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let millis = rd_kafka_message_timestamp(message, &timestampType)
        let timestamp =
            (timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || millis < 0)
            ? nil : Date(timeIntervalSince1970: Double(millis) / 1000)
        self.init(
            topic: topic, partition: m.partition, offset: m.offset, key: key, value: value,
            headers: Self.headers(of: message), timestamp: timestamp)
    }

    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>)
        -> [(name: String, value: [UInt8])]
    {
        var hdrs: OpaquePointer?
        guard rd_kafka_message_headers(message, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR, let hdrs else { return [] }
        var result: [(name: String, value: [UInt8])] = []
        var index = 0
        while true {
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            guard rd_kafka_header_get_all(hdrs, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR else {
                break
            }
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            result.append((name.map { String(cString: $0) } ?? "", bytes))
            index += 1
        }
        return result
    }
}

/// The last topic name seen, by its bytes (never by the `rd_kafka_topic_t`
/// pointer: a handle freed in a rebalance may be reallocated for another topic).
struct TopicNameCache {
    private var bytes: [CChar] = []
    private var string = ""

    mutating func name(_ cName: UnsafePointer<CChar>) -> String {
        let length = strlen(cName)
        let same = length == bytes.count && bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return length == 0 }
            return memcmp(base, cName, length) == 0
        }
        if !same {
            bytes = Array(UnsafeBufferPointer(start: cName, count: length))
            string = String(cString: cName)
        }
        return string
    }
}
