import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("APNs provider-token rules against the simulator", .serialized)
struct APNsAuthLiveTests {
    @Test("InvalidProviderToken: one new token and one retry, never a loop")
    func invalidProviderTokenRetriedOnce() async throws {
        // The client signs with a key the simulator does not know: every token is invalid.
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let stranger = DevCredentials.makeAPNsKey()
            let apns = try APNsClient(
                configuration: APNsClientConfiguration(
                    baseURL: stack.baseURL, teamID: LiveStack.teamID, keyID: LiveStack.keyID,
                    privateKeyPEM: stranger.privateKeyPEM),
                http: http, logger: .test)
            let response = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(2), apnsID: UUID().uuidString.lowercased()))
            #expect(response.status == 403)
            #expect(APNsReason.of(response) == "InvalidProviderToken")
            #expect(apns.tokens.mintCount == 2)
            #expect(stack.simulator.stats().count("apns", 403, "InvalidProviderToken") == 2)
        }
    }

    @Test("minting too often: 429 TooManyProviderTokenUpdates, no new mint, back-off without a storm")
    func tooManyProviderTokenUpdates() async throws {
        // Allowance 0: the key's first token is accepted, any other one within 20 minutes is not.
        try await withLiveStack(configure: { $0.apnsTokenUpdateAllowance = 0 }) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            // Replica A signs the key's first token.
            let replicaA = try stack.makeAPNsClient(http: http)
            #expect(try await replicaA.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(3), apnsID: UUID().uuidString.lowercased())).status == 200)
            // Replica B signs its own: throttled.
            let replicaB = try stack.makeAPNsClient(http: http)
            do {
                _ = try await replicaB.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(4), apnsID: UUID().uuidString.lowercased()))
                Issue.record("expected TooManyProviderTokenUpdates")
            } catch let error as ProviderError {
                #expect(error.kind == .providerTokenThrottled)
                #expect(error.isRetriable)
                #expect(error.retryAfter == .seconds(60))
            }
            // 100 more concurrent sends during the back-off: refused locally, retriable, no new token.
            let refused = await withTaskGroup(of: ProviderError?.self) { group in
                for n in 0..<100 {
                    group.addTask {
                        do {
                            _ = try await replicaB.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased()))
                            return nil
                        } catch { return error as? ProviderError }
                    }
                }
                return await group.reduce(into: [ProviderError]()) { if let e = $1 { $0.append(e) } }
            }
            #expect(refused.count == 100)
            #expect(refused.allSatisfy { $0.kind == .rateLimited && $0.isRetriable && ($0.retryAfter ?? .zero) > .seconds(50) })
            #expect(replicaB.tokens.mintCount == 1, "no mint storm")
            #expect(stack.simulator.stats().count("apns", 429, "TooManyProviderTokenUpdates") == 1)
            #expect(replicaB.stats().rateLimited == 1)
            // Replica A is unaffected.
            #expect(try await replicaA.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(5), apnsID: UUID().uuidString.lowercased())).status == 200)
        }
    }

    @Test("token refresh interval must be 20–60 minutes")
    func refreshIntervalValidated() throws {
        let key = DevCredentials.makeAPNsKey()
        for bad in [Duration.seconds(60), .seconds(19 * 60), .seconds(61 * 60)] {
            #expect(throws: ProviderError.self) {
                try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: key.privateKeyPEM, refreshInterval: bad)
            }
        }
        for good in [Duration.seconds(20 * 60), .seconds(50 * 60), .seconds(60 * 60)] {
            _ = try APNsTokenProvider(teamID: "T", keyID: "K", privateKeyPEM: key.privateKeyPEM, refreshInterval: good)
        }
    }

    @Test("one team per connection: separate pools per team, one shared pool per team")
    func oneTeamPerConnection() async throws {
        try await withLiveStack { stack in
            let pool = HTTP2ClientPool(base: HTTPClientConfiguration(caBundlePath: stack.caPath, maxConnectionsPerHost: 1), logger: .test)
            defer { pool.shutdown() }
            func client(team: String) throws -> APNsClient {
                let configuration = APNsClientConfiguration(
                    baseURL: stack.baseURL, teamID: team, keyID: LiveStack.keyID, privateKeyPEM: stack.apnsKey.privateKeyPEM)
                return try APNsClient(configuration: configuration, http: try pool.client(for: configuration.poolKey), logger: .test)
            }
            let appA = try client(team: LiveStack.teamID)
            let appB = try client(team: LiveStack.teamID)  // same team: shares the pool
            let otherTeam = try client(team: "TEAM000002")
            for apns in [appA, appB] {
                let response = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(7), apnsID: UUID().uuidString.lowercased()))
                #expect(response.status == 200)
            }
            // The simulator knows only TEAM000001's key, so the other team is refused, on its own connection.
            let other = try await otherTeam.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(7), apnsID: UUID().uuidString.lowercased()))
            #expect(other.status == 403)
            let perPool = pool.stats()
            #expect(perPool.count == 2)
            #expect(perPool.values.allSatisfy { $0.connectionsOpened == 1 })
            #expect(stack.simulator.stats().connectionsAccepted == 2)
            // A client refuses a pool that belongs to another team.
            let teamPool = try pool.client(for: "apns|team:\(LiveStack.teamID)")
            #expect(throws: ProviderError.self) {
                try APNsClient(
                    configuration: APNsClientConfiguration(
                        baseURL: stack.baseURL, teamID: "TEAM000003", keyID: LiveStack.keyID,
                        privateKeyPEM: stack.apnsKey.privateKeyPEM),
                    http: teamPool, logger: .test)
            }
        }
    }
}

enum APNsReason {
    static func of(_ response: ProviderResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"] as? String
    }
}
