import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

/// Web Push endpoints come from producers' messages and may name any subdomain
/// and port of an allowed push service: the state kept per push service must
/// stay bounded however many such hosts a stream of messages names.
@Suite("Web Push state per push service")
struct WebPushServiceStateTests {
    /// Sends one request to each URL (nothing listens on port 1: each fails
    /// at connect) and returns the client's per-service counters.
    static func stats(allowedHosts: [String]?, urls: [String]) async throws -> [(host: String, stats: ProviderClientStats)] {
        let http = try HTTP2Client(configuration: .init(connectTimeout: .milliseconds(500)), logger: .test)
        defer { http.shutdown() }
        let client = try WebPushClient(
            configuration: WebPushClientConfiguration(
                vapidPrivateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "mailto:ops@pushfleet.test",
                allowedHosts: allowedHosts),
            http: http, logger: .test)
        for url in urls {
            let request = ProviderRequest(provider: .webpush, path: url, headers: [("ttl", "60")], body: [1, 2, 3])
            await #expect(throws: (any Error).self) { _ = try await client.send(request) }
        }
        return client.stats()
    }

    @Test("endpoints on 300 subdomains and ports of one allowed service share its one guard and one metrics series")
    func subdomainsShareTheirService() async throws {
        let urls = (0..<300).map { "https://wns\($0).localhost:\($0 % 2 == 0 ? 1 : 9)/w/\($0)" }
        let stats = try await Self.stats(allowedHosts: ["push.example", "localhost"], urls: urls)
        #expect(stats.map(\.host) == ["localhost"])
        let counted = stats.first.map { $0.stats.requestsSent + $0.stats.refusedByOpenCircuit } ?? 0
        #expect(counted >= 300, "every request went through the one guard")
    }

    @Test("with no allow-list, one guard per origin, and no more than 1,024 of them")
    func unlistedOriginsAreCapped() async throws {
        let few = try await Self.stats(allowedHosts: nil, urls: (0..<3).map { "https://s\($0).localhost:1/w" })
        #expect(few.map(\.host) == ["s0.localhost:1", "s1.localhost:1", "s2.localhost:1"])
        let many = try await Self.stats(allowedHosts: nil, urls: (0..<1_100).map { "https://s\($0).localhost:1/w" })
        #expect(many.count <= 1_024 && many.count >= 1_100 - 1_024, "\(many.count) kept")
        #expect(many.contains { $0.host == "s1099.localhost:1" }, "the newest origin is kept")
    }
}
