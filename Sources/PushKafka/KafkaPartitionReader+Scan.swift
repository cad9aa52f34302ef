import CRdKafka

/// What a scan read of one partition, against what the broker reported.
///
/// The end a broker reports (ListOffsets, the "high watermark" of
/// `rd_kafka_query_watermark_offsets`) is not trusted as the end: Tansu reports
/// the base offset of the last record batch + 1, so a reader that stopped there
/// would miss the rest of that batch. A scan reads each partition until the
/// fetch itself finds nothing more (`_PARTITION_EOF`, which librdkafka raises
/// from the fetch response's own high watermark) and reports both.
public struct KafkaPartitionScan: Sendable, Equatable, CustomStringConvertible {
    public var partition: KafkaTopicPartition
    /// The start (low watermark) and end (high watermark) the broker reported when the scan began.
    public var reportedStart: Int64
    public var reportedEnd: Int64
    /// The first and last offset read (nil: nothing read).
    public var first: Int64?
    public var last: Int64?
    /// Messages read.
    public var messages = 0
    /// Messages read at or past `reportedEnd`: what a reader that trusted it would have missed.
    public var pastReportedEnd = 0
    /// The end of the partition the fetch reached (the offset after its last message);
    /// nil when the scan stopped before it (the caller stopped, or it failed).
    public var end: Int64?

    public init(partition: KafkaTopicPartition, reportedStart: Int64, reportedEnd: Int64) {
        self.partition = partition
        self.reportedStart = reportedStart
        self.reportedEnd = reportedEnd
    }

    /// Whether the scan read this partition to its end.
    public var reachedEnd: Bool { end != nil }

    mutating func record(_ offset: Int64) {
        if first == nil { first = offset }
        last = offset
        messages += 1
        if offset >= reportedEnd { pastReportedEnd += 1 }
    }

    /// `push.dlq[0]: read 0…9 (10 messages) to the end at 10; the broker reported 0…1 (9 past it)`.
    public var description: String {
        let read = first.map { "read \($0)…\(last ?? $0) (\(messages) messages)" } ?? "read nothing"
        let reached = end.map { "to the end at \($0)" } ?? "NOT to the end"
        let past = pastReportedEnd > 0 ? " (\(pastReportedEnd) past it)" : ""
        return "\(partition): \(read) \(reached); the broker reported \(reportedStart)…\(reportedEnd)\(past)"
    }
}

extension KafkaPartitionReader {
    /// Every message of `topic` (each partition from its reported start to the end its
    /// fetch reaches), in offset order per partition. Reads by assignment: no group is
    /// joined and no offset is committed, so any number of scans (with any filters) see
    /// the same messages. Holds them all: for a topic that may be large,
    /// `scan(topic:chunk:idleTimeout:each:)`.
    public func scan(topic: String, timeout: Duration = .seconds(30)) async throws -> [KafkaMessage] {
        var all: [KafkaMessage] = []
        try await scan(topic: topic, idleTimeout: timeout) { chunk in
            all += chunk
            return true
        }
        return all
    }

    /// The same messages as `scan(topic:)`, handed to `each` in chunks of at most
    /// `chunk` as they are read, so a topic of any size is read in bounded memory;
    /// `each` returns false to stop early. Every partition is read until its fetch
    /// finds nothing more, whatever end the broker reported (see `KafkaPartitionScan`),
    /// so messages written while the scan runs may be read too. Returns what was read
    /// of each partition. Fails when `idleTimeout` passes with nothing read (not when a
    /// long scan is slow).
    @discardableResult
    public func scan(topic: String, chunk: Int = 500, idleTimeout: Duration = .seconds(30),
                     each: ([KafkaMessage]) async throws -> Bool) async throws -> [KafkaPartitionScan] {
        let timeoutMs = idleTimeout.kafkaMilliseconds
        var progress = try await thread.run { [handle] () throws -> [Int32: KafkaPartitionScan] in
            try handle.withHandle { rk in
                let count = try KafkaMetadata.partitionCount(rk: rk, topic: topic, timeoutMs: timeoutMs)
                var scans: [Int32: KafkaPartitionScan] = [:]
                for partition in 0..<Int32(clamping: count) {
                    var low: Int64 = 0, high: Int64 = 0
                    let err = rd_kafka_query_watermark_offsets(rk, topic, partition, &low, &high, timeoutMs)
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                        throw KafkaError.rdKafka(err, "watermarks of \(topic)[\(partition)]")
                    }
                    scans[partition] = KafkaPartitionScan(
                        partition: KafkaTopicPartition(topic: topic, partition: partition), reportedStart: low, reportedEnd: high)
                }
                // Every partition, also one reported empty: the fetch says whether it is.
                let tps = scans.keys.sorted().map { KafkaTopicPartition(topic: topic, partition: $0) }
                guard !tps.isEmpty else { return scans }
                let assign = KafkaPartitionList.with(tps, offsets: tps.map { scans[$0.partition]?.reportedStart ?? 0 }) {
                    rd_kafka_assign(rk, $0)
                }
                guard assign == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(assign, "assign \(topic)") }
                return scans
            }
        }
        guard !progress.isEmpty else { return [] }
        do {
            let size = max(1, chunk)
            while progress.values.contains(where: { !$0.reachedEnd }) {
                let (messages, updated) = try await thread.run { [handle, progress] in
                    try handle.withHandle { rk in
                        try Self.readChunk(rk, topic: topic, progress: progress, size: size, idleTimeout: idleTimeout)
                    }
                }
                progress = updated
                if !messages.isEmpty, try await !each(messages) { break }
            }
        } catch {
            _ = try? await unassign()
            throw error
        }
        try await unassign()
        return progress.keys.sorted().compactMap { progress[$0] }
    }

    private func unassign() async throws {
        try await thread.run { [handle] in try handle.withHandle { rk in _ = rd_kafka_assign(rk, nil) } }
    }

    /// Up to `size` messages of the partitions not yet read to their end, and the
    /// progress with them (on the reader's thread). A partition's end is its
    /// `_PARTITION_EOF`, whose offset is where the fetch found nothing more.
    private static func readChunk(_ rk: OpaquePointer, topic: String, progress: [Int32: KafkaPartitionScan], size: Int,
                                  idleTimeout: Duration) throws -> ([KafkaMessage], [Int32: KafkaPartitionScan]) {
        var progress = progress
        var messages: [KafkaMessage] = []
        var deadline = ContinuousClock.now + idleTimeout
        while progress.values.contains(where: { !$0.reachedEnd }), messages.count < size {
            guard ContinuousClock.now < deadline else {
                let open = progress.values.filter { !$0.reachedEnd }.map(\.partition.partition).sorted()
                throw KafkaError.rdKafka(RD_KAFKA_RESP_ERR__TIMED_OUT,
                                         "scan of \(topic): nothing read for \(idleTimeout), partitions \(open) not read to their end")
            }
            guard let message = rd_kafka_consumer_poll(rk, 200) else { continue }
            defer { rd_kafka_message_destroy(message) }
            deadline = ContinuousClock.now + idleTimeout
            let partition = message.pointee.partition
            let err = message.pointee.err
            if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                if progress[partition]?.end == nil { progress[partition]?.end = message.pointee.offset }
                continue
            }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                let text = rd_kafka_message_errstr(message).map { String(cString: $0) } ?? ""
                throw KafkaError.rdKafka(err, "scanning \(topic)[\(partition)]: \(text)")
            }
            // A partition already read to its end is not read further in this scan.
            guard progress[partition]?.reachedEnd == false else { continue }
            let copy = KafkaMessage(copying: message)
            progress[partition]?.record(copy.offset)
            messages.append(copy)
        }
        return (messages, progress)
    }
}
