import Foundation
import PushCore
import XCTest

/// A bare HTTP/2 client over `openssl s_client` (TLS, ALPN h2): frames are
/// written by hand, so a test can do what curl and h2load never do on purpose:
/// reset a stream mid-request, send trailers, drop a connection with streams open.
final class RawHTTP2Session {
    struct Frame {
        let type: UInt8
        let flags: UInt8
        let streamID: UInt32
        let payload: [UInt8]
    }

    static let data: UInt8 = 0, headers: UInt8 = 1, rstStream: UInt8 = 3, settings: UInt8 = 4
    static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4

    private let process: Process
    private let input: Pipe
    private let received = Locked<[UInt8]>([])

    init(port: Int, caPath: String) throws {
        let openssl = "/usr/bin/openssl"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: openssl), "openssl CLI not installed")
        process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "s_client", "-connect", "127.0.0.1:\(port)", "-alpn", "h2", "-quiet", "-no_ign_eof", "-verify_quiet",
            "-CAfile", caPath,
        ]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let received = self.received
        output.fileHandleForReading.readabilityHandler = { handle in
            let bytes = [UInt8](handle.availableData)
            received.withLock { $0 += bytes }
        }
        try process.run()
        send([UInt8]("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + Self.frame(Self.settings, flags: 0, stream: 0, []))
    }

    /// Closes the connection (whatever streams are open): end of input makes openssl
    /// close it; SIGKILL if it has not within 5 s (test runners may block SIGTERM).
    func close() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    func send(_ bytes: [UInt8]) {
        input.fileHandleForWriting.write(Data(bytes))
    }

    /// HEADERS for `POST path` with `headers` (lower-case names), END_HEADERS set.
    func sendRequest(stream: UInt32, path: String, headers: [(String, String)] = [], endStream: Bool) {
        // :method POST and :scheme https are static-table entries 3 and 7; :authority and :path
        // are literals with an indexed name (1 and 4), other headers literals with a new name.
        var block: [UInt8] = [0x83, 0x87, 0x01] + Self.string("localhost") + [0x04] + Self.string(path)
        for (name, value) in headers { block += [0x00] + Self.string(name) + Self.string(value) }
        send(Self.frame(Self.headers, flags: Self.endHeaders | (endStream ? Self.endStream : 0), stream: stream, block))
    }

    /// Trailers: a HEADERS block ending the stream.
    func sendTrailers(stream: UInt32, _ headers: [(String, String)]) {
        var block: [UInt8] = []
        for (name, value) in headers { block += [0x00] + Self.string(name) + Self.string(value) }
        send(Self.frame(Self.headers, flags: Self.endHeaders | Self.endStream, stream: stream, block))
    }

    func sendData(stream: UInt32, _ text: String, endStream: Bool) {
        send(Self.frame(Self.data, flags: endStream ? Self.endStream : 0, stream: stream, Array(text.utf8)))
    }

    /// RST_STREAM with CANCEL (0x8).
    func sendReset(stream: UInt32) {
        send(Self.frame(Self.rstStream, flags: 0, stream: stream, [0, 0, 0, 8]))
    }

    /// The frames received so far, once one matches `predicate` (nil after `seconds`).
    func waitForFrames(seconds: Double = 10, until predicate: (Frame) -> Bool) async throws -> [Frame]? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let frames = Self.parse(received.withLock { $0 })
            if frames.contains(where: predicate) { return frames }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    static func frame(_ type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        var bytes = [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
        bytes += [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
        return bytes + payload
    }

    /// An HPACK string literal, not Huffman-coded (short strings only).
    static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        precondition(bytes.count < 127)
        return [UInt8(bytes.count)] + bytes
    }

    /// The complete frames in `bytes`.
    static func parse(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            let stream = bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(
                Frame(
                    type: bytes[offset + 3], flags: bytes[offset + 4], streamID: stream,
                    payload: Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        return frames
    }
}
