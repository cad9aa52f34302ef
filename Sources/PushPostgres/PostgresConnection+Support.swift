import CLibpq
import Foundation
import Logging

/// Forwards server NOTICE/WARNING messages to the logger instead of stderr,
/// and remembers a FATAL message that arrived while the connection was idle
/// (e.g. from `pg_terminate_backend`): the session is over even if the
/// socket has not closed yet. Only used on the connection's executor thread.
final class NoticeSink {
    let logger: Logger
    var sawFatal = false
    init(logger: Logger) { self.logger = logger }
}

func noticeReceiver(_ context: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let context, let result else { return }
    let sink = Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
    let message = PostgresConnection.trimmed(PQresultErrorMessage(result))
    let severity = PQresultErrorField(result, DiagField.severity).map { String(cString: $0) } ?? ""
    if severity == "FATAL" || severity == "PANIC" {
        sink.sawFatal = true
        sink.logger.info("postgres session ended by server", metadata: ["postgres.error": "\(message)"])
    } else {
        sink.logger.debug("postgres notice", metadata: ["postgres.notice": "\(message)"])
    }
}

/// Flags that any thread may read.
/// `@unchecked Sendable`: every access holds `lock`.
final class LockedStatus: @unchecked Sendable {
    private let lock = NSLock()
    private var closed = false
    private var ok = false
    private var transaction = false

    var isBroken: Bool { lock.withLock { closed || !ok } }
    var isClosed: Bool { lock.withLock { closed } }
    var inTransaction: Bool { lock.withLock { transaction } }

    func update(ok: Bool, inTransaction: Bool) {
        lock.withLock {
            self.ok = ok
            self.transaction = inTransaction
        }
    }

    /// Returns false if it was already closed.
    func markClosed() -> Bool {
        lock.withLock {
            defer { closed = true }
            return !closed
        }
    }
}

enum ConnectionCounter {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var value = 0

    /// Next process-unique connection number (`value` is guarded by `lock`).
    static func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}
