import Foundation

/// A value guarded by a lock, shared between event-loop threads and callers.
///
/// `@unchecked Sendable` is safe because `value` is only ever read or written
/// inside `withLock`, which holds `lock` for the whole access.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
