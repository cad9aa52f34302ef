import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is safe: every access to `value` goes through `withLock`,
/// which holds `lock` for the whole access.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
