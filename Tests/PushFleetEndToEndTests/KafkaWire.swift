import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal Kafka wire-protocol client (Metadata v1, Produce v3, Fetch v4,
/// record batches v2, no compression) for the fuzz tier. The end-to-end
/// target links no Kafka library, and the fuzz tier needs what the
/// `pushfleet` commands do not give: any bytes with any key on any topic and
/// partition, the offset each landed at, and the dead-letter topic's headers.
/// Blocking socket calls: callers run it on a dispatch queue (`KafkaWire.run`).
final class KafkaWire {
    struct Record {
        var key: [UInt8]?
        var value: [UInt8]
        var headers: [(String, [UInt8])] = []
        var offset: Int64 = -1
    }

    struct Metadata {
        var brokers: [Int32: (host: String, port: Int)] = [:]
        /// topic → partition → leader broker id
        var leaders: [String: [Int32: Int32]] = [:]
    }

    private var connections: [Int32: WireConnection] = [:]
    private let bootstrap: (host: String, port: Int)
    private(set) var metadata = Metadata()

    init(bootstrapServers: String) throws {
        guard let first = bootstrapServers.split(separator: ",").first,
              let colon = first.lastIndex(of: ":"), let port = Int(first[first.index(after: colon)...]) else {
            throw TestFailure("bad bootstrap servers \(bootstrapServers)")
        }
        bootstrap = (String(first[..<colon]), port)
    }

    /// Runs `body` off the cooperative pool (the socket calls block).
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    func refreshMetadata(topics: [String]) throws {
        var w = WireWriter()
        w.int32(Int32(topics.count))
        for t in topics { w.string(t) }
        let boot = try WireConnection(host: bootstrap.host, port: bootstrap.port)
        var r = try boot.roundTrip(apiKey: 3, version: 1, body: w.bytes)
        var m = Metadata()
        for _ in try 0..<r.count() {
            let id = try r.int32(), host = try r.string() ?? "", port = try r.int32()
            _ = try r.string()
            m.brokers[id] = (host, Int(port))
        }
        _ = try r.int32()  // controller
        for _ in try 0..<r.count() {
            let error = try r.int16(), name = try r.string() ?? ""
            _ = try r.int8()
            var partitions: [Int32: Int32] = [:]
            for _ in try 0..<r.count() {
                _ = try r.int16()
                let partition = try r.int32(), leader = try r.int32()
                for _ in try 0..<r.count() { _ = try r.int32() }
                for _ in try 0..<r.count() { _ = try r.int32() }
                partitions[partition] = leader
            }
            if error != 0 { throw TestFailure("metadata for \(name): error \(error)") }
            m.leaders[name] = partitions
        }
        metadata = m
    }

    func partitionCount(_ topic: String) -> Int { metadata.leaders[topic]?.count ?? 0 }

    private func connection(leaderOf topic: String, _ partition: Int32) throws -> WireConnection {
        guard let leader = metadata.leaders[topic]?[partition], let broker = metadata.brokers[leader] else {
            throw TestFailure("no leader known for \(topic)/\(partition)")
        }
        if let c = connections[leader] { return c }
        let c = try WireConnection(host: broker.host, port: broker.port)
        connections[leader] = c
        return c
    }

    /// Appends `records` to one partition as one batch (acks=all); returns the offset of the first.
    func produce(topic: String, partition: Int32, records: [Record]) throws -> Int64 {
        let batch = RecordBatch.encode(records)
        var w = WireWriter()
        w.int16(-1)  // transactional id: null
        w.int16(-1)  // acks: all
        w.int32(30_000)
        w.int32(1)
        w.string(topic)
        w.int32(1)
        w.int32(partition)
        w.int32(Int32(batch.count))
        w.raw(batch)
        var r = try connection(leaderOf: topic, partition).roundTrip(apiKey: 0, version: 3, body: w.bytes)
        _ = try r.int32()
        _ = try r.string()
        _ = try r.int32()
        _ = try r.int32()
        let error = try r.int16(), base = try r.int64()
        guard error == 0 else { throw TestFailure("produce to \(topic)/\(partition): Kafka error \(error)") }
        return base
    }

    /// Every record of one partition from `from` up to the high watermark.
    func fetchAll(topic: String, partition: Int32, from: Int64 = 0) throws -> [Record] {
        var out: [Record] = []
        var next = from
        while true {
            var w = WireWriter()
            w.int32(-1)
            w.int32(100)  // max wait ms
            w.int32(1)
            w.int32(64 << 20)
            w.int8(0)
            w.int32(1)
            w.string(topic)
            w.int32(1)
            w.int32(partition)
            w.int64(next)
            w.int32(8 << 20)
            var r = try connection(leaderOf: topic, partition).roundTrip(apiKey: 1, version: 4, body: w.bytes)
            _ = try r.int32()
            _ = try r.int32()
            _ = try r.string()
            _ = try r.int32()
            _ = try r.int32()
            let error = try r.int16(), high = try r.int64()
            _ = try r.int64()
            let aborted = try r.int32()
            if aborted > 0 { for _ in 0..<aborted { _ = try r.int64(); _ = try r.int64() } }
            guard error == 0 else { throw TestFailure("fetch \(topic)/\(partition)@\(next): Kafka error \(error)") }
            let records = try RecordBatch.decode(try r.bytes() ?? []).filter { $0.offset >= next }
            out += records
            if let last = records.last { next = last.offset + 1 }
            if next >= high { return out }
            if records.isEmpty { throw TestFailure("fetch \(topic)/\(partition)@\(next): no progress below high watermark \(high)") }
        }
    }
}

/// Kafka's v2 record batch, uncompressed.
enum RecordBatch {
    static func encode(_ records: [KafkaWire.Record]) -> [UInt8] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var body = WireWriter()  // from attributes on: what the CRC covers
        body.int16(0)
        body.int32(Int32(records.count - 1))
        body.int64(now)
        body.int64(now)
        body.int64(-1)
        body.int16(-1)
        body.int32(-1)
        body.int32(Int32(records.count))
        for (i, record) in records.enumerated() {
            var r = WireWriter()
            r.int8(0)
            r.varint(0)
            r.varint(Int64(i))
            if let key = record.key { r.varint(Int64(key.count)); r.raw(key) } else { r.varint(-1) }
            r.varint(Int64(record.value.count))
            r.raw(record.value)
            r.varint(Int64(record.headers.count))
            for (name, value) in record.headers {
                r.varint(Int64(name.utf8.count))
                r.raw(Array(name.utf8))
                r.varint(Int64(value.count))
                r.raw(value)
            }
            body.varint(Int64(r.bytes.count))
            body.raw(r.bytes)
        }
        var w = WireWriter()
        w.int64(0)
        w.int32(Int32(4 + 1 + 4 + body.bytes.count))
        w.int32(-1)
        w.int8(2)
        w.int32(Int32(bitPattern: CRC32C.checksum(body.bytes)))
        w.raw(body.bytes)
        return w.bytes
    }

    /// The records of every complete v2 batch in `data` (a fetch may end in a partial one).
    static func decode(_ data: [UInt8]) throws -> [KafkaWire.Record] {
        var out: [KafkaWire.Record] = []
        var r = WireReader(data)
        while r.remaining >= 12 {
            let base = try r.int64(), length = Int(try r.int32())
            guard length > 0, r.remaining >= length else { break }
            var b = WireReader(try r.raw(length))
            _ = try b.int32()
            let magic = try b.int8()
            guard magic == 2 else { continue }
            _ = try b.int32()
            let attributes = try b.int16()
            guard attributes & 0x07 == 0 else { throw TestFailure("compressed batch at \(base): not supported") }
            _ = try b.int32()
            _ = try b.int64()
            _ = try b.int64()
            _ = try b.int64()
            _ = try b.int16()
            _ = try b.int32()
            let count = try b.int32()
            let control = attributes & 0x20 != 0
            for _ in 0..<max(count, 0) {
                let size = Int(try b.varint())
                var e = WireReader(try b.raw(size))
                _ = try e.int8()
                _ = try e.varint()
                let delta = try e.varint()
                let keyLength = Int(try e.varint())
                let key = try keyLength >= 0 ? e.raw(keyLength) : nil
                let valueLength = Int(try e.varint())
                let value = try valueLength >= 0 ? e.raw(valueLength) : []
                var headers: [(String, [UInt8])] = []
                let headerCount = try e.varint()
                for _ in 0..<max(0, headerCount) {
                    let name = String(decoding: try e.raw(Int(try e.varint())), as: UTF8.self)
                    let n = Int(try e.varint())
                    headers.append((name, try n >= 0 ? e.raw(n) : []))
                }
                if !control { out.append(KafkaWire.Record(key: key, value: value, headers: headers, offset: base + delta)) }
            }
        }
        return out
    }
}

/// CRC-32C (Castagnoli), the record batch checksum.
enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// One TCP connection to a broker: size-prefixed requests and responses.
final class WireConnection {
    private let fd: Int32
    private var correlation: Int32 = 0

    init(host: String, port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            throw TestFailure("broker host \(host) is not an IPv4 address")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket(): errno \(errno)") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect \(host):\(port): errno \(errno)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    func roundTrip(apiKey: Int16, version: Int16, body: [UInt8]) throws -> WireReader {
        correlation += 1
        var header = WireWriter()
        header.int16(apiKey)
        header.int16(version)
        header.int32(correlation)
        header.string("pushfleet-fuzz")
        var frame = WireWriter()
        frame.int32(Int32(header.bytes.count + body.count))
        try send(frame.bytes + header.bytes + body)
        var size = WireReader(try receive(4))
        let payload = try receive(Int(try size.int32()))
        var r = WireReader(payload)
        guard try r.int32() == correlation else { throw TestFailure("Kafka response out of order") }
        return r
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send to broker: errno \(errno)") }
            sent += n
        }
    }

    private func receive(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw TestFailure("receive from broker: \(n == 0 ? "closed" : "errno \(errno)")") }
            got += n
        }
        return out
    }
}

struct WireWriter {
    var bytes: [UInt8] = []
    mutating func int8(_ v: Int8) { bytes.append(UInt8(bitPattern: v)) }
    mutating func int16(_ v: Int16) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
    mutating func int32(_ v: Int32) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
    mutating func int64(_ v: Int64) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
    mutating func raw(_ b: [UInt8]) { bytes += b }
    mutating func string(_ s: String) {
        int16(Int16(s.utf8.count))
        bytes += Array(s.utf8)
    }
    /// Zig-zag varint.
    mutating func varint(_ v: Int64) {
        var u = UInt64(bitPattern: (v << 1) ^ (v >> 63))
        while u >= 0x80 {
            bytes.append(UInt8(u & 0x7F) | 0x80)
            u >>= 7
        }
        bytes.append(UInt8(u))
    }
}

struct WireReader {
    private let data: [UInt8]
    private var at = 0
    init(_ data: [UInt8]) { self.data = data }
    var remaining: Int { data.count - at }

    mutating func raw(_ n: Int) throws -> [UInt8] {
        guard n >= 0, n <= remaining else { throw TestFailure("Kafka response truncated") }
        defer { at += n }
        return Array(data[at..<at + n])
    }
    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        try raw(MemoryLayout<T>.size).reduce(T.zero) { ($0 << 8) | T(truncatingIfNeeded: $1) }
    }
    mutating func int8() throws -> Int8 { try integer(Int8.self) }
    mutating func int16() throws -> Int16 { try integer(Int16.self) }
    mutating func int32() throws -> Int32 { try integer(Int32.self) }
    mutating func int64() throws -> Int64 { try integer(Int64.self) }
    /// An array count (null arrays count as empty).
    mutating func count() throws -> Int { max(0, Int(try int32())) }
    mutating func string() throws -> String? {
        let n = Int(try int16())
        return n < 0 ? nil : String(decoding: try raw(n), as: UTF8.self)
    }
    mutating func bytes() throws -> [UInt8]? {
        let n = Int(try int32())
        return n < 0 ? nil : try raw(n)
    }
    mutating func varint() throws -> Int64 {
        var u: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard shift < 64 else { throw TestFailure("varint too long") }
            let b = try raw(1)[0]
            u |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: u >> 1) ^ -Int64(bitPattern: u & 1)
    }
}
