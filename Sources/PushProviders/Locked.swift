import Foundation

/// A value guarded by an `NSLock`.
final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only reached through `withLock`, which
    // holds the lock for the whole access.
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
