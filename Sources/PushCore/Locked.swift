import Foundation

/// A value behind a mutex, for the small pieces of state that C callbacks,
/// dedicated threads and tasks share. Every module uses this one.
public final class Locked<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
