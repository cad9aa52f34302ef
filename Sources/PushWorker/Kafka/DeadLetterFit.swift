import Foundation
import PushCore

/// What to produce instead of a message Kafka refused for the message's own
/// sake (over `message.max.bytes`, an invalid record): never because the
/// brokers are away, which is waited out. A retry message becomes a dead
/// letter; a dead letter keeps its reason and origin headers and loses its
/// body, first down to a prefix, then entirely. The `pushfleet-dlq-body`
/// header says which, and where the original is (the origin headers name
/// its topic, partition and offset).
enum DeadLetterFit {
    /// The body prefix a too-large dead letter keeps: enough to see what it was.
    static let truncatedBodyBytes = 65_536

    /// The next, smaller message to try after Kafka refused `message` with
    /// `refusal`; nil when there is nothing left to cut.
    static func next(after message: OutgoingMessage, refusal: String, deadLetterTopic: String) -> OutgoingMessage? {
        var next = message
        let original = message.origin.map { " the original is at \($0.topic)/\($0.partition)/\($0.offset)" } ?? ""
        if message.topic != deadLetterTopic {
            next.topic = deadLetterTopic
            next.label = "produce_failed"
            set(RetryHeaders.reasonKey, "produce_failed: \(message.topic) refused the message: \(refusal)", in: &next.headers)
            return next
        }
        let cut = message.headers.contains { $0.name == RetryHeaders.bodyKey }
        if !cut, message.value.count > truncatedBodyBytes {
            next.value = Array(message.value.prefix(truncatedBodyBytes))
            set(RetryHeaders.bodyKey, "truncated: first \(truncatedBodyBytes) of \(message.value.count) bytes (\(refusal));\(original)",
                in: &next.headers)
            return next
        }
        if !message.value.isEmpty || message.key != nil {
            next.value = []
            next.key = nil
            let size = value(RetryHeaders.bodyKey, in: message.headers).flatMap(Self.originalSize) ?? message.value.count
            set(RetryHeaders.bodyKey, "omitted: \(size) bytes (\(refusal));\(original)", in: &next.headers)
            return next
        }
        return nil
    }

    private static func set(_ name: String, _ text: String, in headers: inout [(name: String, value: [UInt8])]) {
        headers.removeAll { $0.name == name }
        headers.append((name, Array(BoundedText.cut(text, maxBytes: 1000).utf8)))
    }

    private static func value(_ name: String, in headers: [(name: String, value: [UInt8])]) -> String? {
        headers.first { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// The original size named by a `truncated: first N of M bytes` header.
    private static func originalSize(_ header: String) -> Int? {
        guard let of = header.range(of: " of "), let bytes = header.range(of: " bytes", range: of.upperBound..<header.endIndex) else {
            return nil
        }
        return Int(header[of.upperBound..<bytes.lowerBound])
    }
}
