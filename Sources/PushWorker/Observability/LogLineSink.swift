import Foundation
import PushCore

/// Where JSON log lines go. Each `write` gets one complete line and must not
/// interleave it with another.
public struct LogLineSink: Sendable {
    private let body: @Sendable ([UInt8]) -> Void

    /// A sink that hands each line to `write` (tests collect lines this way).
    public init(_ write: @escaping @Sendable ([UInt8]) -> Void) { self.body = write }

    /// Writes `line` (ending in a newline).
    public func write(_ line: [UInt8]) { body(line) }

    /// Standard error, one `write(2)` loop per line under a process-wide
    /// lock, so lines from concurrent loggers never interleave.
    public static let standardError = LogLineSink { line in
        stderrLock.withLock { _ in writeAll(line, to: 2) }
    }

    private static let stderrLock = Locked(())

    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let n = Foundation.write(fd, base + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}
