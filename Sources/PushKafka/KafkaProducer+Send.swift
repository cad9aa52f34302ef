import CRdKafka
import Foundation

extension KafkaProducer {
    /// Per-message context handed to librdkafka as the message opaque.
    final class Delivery {
        let continuation: CheckedContinuation<SendOutcome, Error>
        init(_ continuation: CheckedContinuation<SendOutcome, Error>) { self.continuation = continuation }
    }

    enum SendOutcome: Sendable {
        case delivered(partition: Int32, offset: Int64)
        case queueFull
    }

    /// Produces one message and returns where it was written once the broker
    /// acknowledged it (`acks=all`). A full local queue is waited out, not thrown.
    /// `partition` nil lets the partitioner pick one from the key.
    @discardableResult
    public func send(
        topic: String, key: [UInt8]?, value: [UInt8], headers: [(name: String, value: [UInt8])] = [],
        partition: Int32? = nil
    ) async throws -> (partition: Int32, offset: Int64) {
        var backoff = Duration.milliseconds(2)
        while true {
            if let fatal = context.fatalError.withLock({ $0 }) { throw KafkaError.fatal(fatal) }
            let outcome = try await withCheckedThrowingContinuation { continuation in
                let delivery = Unmanaged.passRetained(Delivery(continuation))
                do {
                    try produce(
                        topic: topic, key: key, value: value, headers: headers, partition: partition,
                        opaque: delivery.toOpaque())
                } catch let error as KafkaError where error.code == RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue {
                    delivery.release()
                    continuation.resume(returning: .queueFull)
                } catch {
                    delivery.release()
                    continuation.resume(throwing: error)
                }
            }
            switch outcome {
            case .delivered(let partition, let offset):
                return (partition, offset)
            case .queueFull:
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .milliseconds(100))
            }
        }
    }

    /// Enqueues with `rd_kafka_produceva`; throws if librdkafka refused the message, in
    /// which case no delivery report will come for `opaque`.
    private func produce(
        topic: String, key: [UInt8]?, value: [UInt8], headers: [(name: String, value: [UInt8])],
        partition: Int32?, opaque: UnsafeMutableRawPointer
    ) throws {
        // Header names and values are copied by librdkafka; keep them alive for the call.
        let names = headers.map { strdup($0.name) }
        defer { names.forEach { free($0) } }
        let error: OpaquePointer? = try topic.withCString { topicPtr in
            try (key ?? []).withUnsafeBytes { keyBytes in
                try value.withUnsafeBytes { valueBytes in
                    try withHeaderBuffers(headers.map(\.value)) { headerValues in
                        var vus: [rd_kafka_vu_t] = []
                        var vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_TOPIC
                        vu.u.cstr = topicPtr
                        vus.append(vu)
                        if let partition {
                            vu = rd_kafka_vu_t()
                            vu.vtype = RD_KAFKA_VTYPE_PARTITION
                            vu.u.i32 = partition
                            vus.append(vu)
                        }
                        if key != nil {
                            vu = rd_kafka_vu_t()
                            vu.vtype = RD_KAFKA_VTYPE_KEY
                            vu.u.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                            vu.u.mem.size = keyBytes.count
                            vus.append(vu)
                        }
                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_VALUE
                        vu.u.mem.ptr = UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                        vu.u.mem.size = valueBytes.count
                        vus.append(vu)
                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_MSGFLAGS
                        vu.u.i = RD_KAFKA_MSG_F_COPY
                        vus.append(vu)
                        vu = rd_kafka_vu_t()
                        vu.vtype = RD_KAFKA_VTYPE_OPAQUE
                        vu.u.ptr = opaque
                        vus.append(vu)
                        for (index, name) in names.enumerated() {
                            vu = rd_kafka_vu_t()
                            vu.vtype = RD_KAFKA_VTYPE_HEADER
                            vu.u.header.name = UnsafePointer(name)
                            vu.u.header.val = headerValues[index].baseAddress
                            vu.u.header.size = headerValues[index].count
                            vus.append(vu)
                        }
                        return try handle.withHandle { rk in rd_kafka_produceva(rk, vus, vus.count) }
                    }
                }
            }
        }
        if let error { throw KafkaError.consuming(error, context: "produce to \(topic)") }
    }

    /// Delivery report: resumes the `send` waiting for this message (any thread).
    static func deliveryReport(_ message: UnsafePointer<rd_kafka_message_t>) {
        guard let opaque = message.pointee._private else { return }
        let delivery = Unmanaged<Delivery>.fromOpaque(opaque).takeRetainedValue()
        let err = message.pointee.err
        if err == RD_KAFKA_RESP_ERR_NO_ERROR {
            delivery.continuation.resume(
                returning: .delivered(partition: message.pointee.partition, offset: message.pointee.offset))
        } else {
            delivery.continuation.resume(throwing: KafkaError.rdKafka(err, "delivery failed"))
        }
    }
}

/// Runs `body` with a stable buffer for each header value (non-nil base address even
/// for empty values, so an empty header is not sent as a null one).
private func withHeaderBuffers<R>(_ values: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
    let buffers = values.map { bytes -> UnsafeMutableRawBufferPointer in
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        buffer.copyBytes(from: bytes)
        return buffer
    }
    defer { buffers.forEach { $0.deallocate() } }
    return try body(buffers.enumerated().map { UnsafeRawBufferPointer(rebasing: $1[0..<values[$0].count]) })
}
