import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

/// Per-connection stream use and re-send counting against the real simulator
/// over TLS + HTTP/2.
@Suite("HTTP/2 stream limits and re-sends", .serialized)
struct StreamLimitLiveTests {
    struct Shape: Sendable, CustomTestStringConvertible {
        var server: Int
        var client: Int
        var connections: Int
        var testDescription: String { "server \(server), client \(client), \(connections) connection(s)" }
    }

    /// Sends `count` APNs requests at once; returns the statuses.
    static func burst(_ apns: APNsClient, count: Int) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<count {
                group.addTask {
                    try await apns.send(
                        LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased())
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test(
        "no connection ever carries more streams than min(ours, the server's), from the first request",
        arguments: [
            Shape(server: 10, client: 100, connections: 1), Shape(server: 10, client: 100, connections: 2),
            Shape(server: 1000, client: 100, connections: 1), Shape(server: 1000, client: 100, connections: 2),
        ])
    func perConnectionLimit(shape: Shape) async throws {
        try await withLiveStack(configure: { $0.maxConcurrentStreams = shape.server }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: shape.connections) {
                $0.maxConcurrentStreams = shape.client
            }
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let count = 1200
            let statuses = try await Self.burst(apns, count: count)
            let stats = stack.simulator.stats()
            let limit = min(shape.server, shape.client)
            print(
                "\(shape.testDescription): peak streams on one connection \(stats.peakConcurrentStreams) (limit \(limit)), limit violations \(stats.streamLimitViolations), connections \(stats.connectionsAccepted), re-sent \(apns.stats().resentWithoutStatus)"
            )
            #expect(statuses.count == count && statuses.allSatisfy { $0 == 200 })
            #expect(stats.peakConcurrentStreams <= limit)
            #expect(stats.streamLimitViolations == 0)
            #expect(stats.peakConcurrentStreams >= 2, "the burst was multiplexed")
        }
    }
}
