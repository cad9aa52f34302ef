import Foundation

/// Returns once `condition` holds, looking every 5 ms: a test orders its
/// steps by what it can observe, never by sleeping and hoping.
/// - Throws: `TestTimeout` after `limit`, or `CancellationError`.
package func waitUntil(
    _ what: @autoclosure () -> String, limit: Duration = .seconds(30), _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestTimeout(what: what(), after: limit) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// A condition a test waited for did not come about in time.
package struct TestTimeout: Error, CustomStringConvertible {
    package let what: String
    package let after: Duration
    package var description: String { "waited \(after) for \(what)" }
}
