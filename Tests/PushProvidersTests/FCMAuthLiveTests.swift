import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("FCM OAuth resilience against the simulator", .serialized)
struct FCMAuthLiveTests {
    @Test("token endpoint answers 503 three times: sends fail retriably, recover after, no stampede")
    func tokenEndpointDown() async throws {
        try await withLiveStack { stack in
            // A count, not a duration: on a loaded machine setting up the clients took longer
            // than a 2-second outage, and the senders never saw it.
            try stack.simulator.setScenarios([
                SimulatorScenario(provider: "oauth", fault: .httpError(status: 503, retryAfterSeconds: nil), count: 3)
            ])
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let fcm = try stack.makeFCMClient(http: http)
            let failures = Locked(0)
            // 200 concurrent senders, each retrying every 50 ms until accepted (what a worker's retries do, faster).
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<200 {
                    group.addTask {
                        while true {
                            do {
                                return try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(n))).status
                            } catch let error as ProviderError where error.isRetriable {
                                #expect(error.kind == .tokenEndpoint)
                                #expect(error.httpStatus == 503)
                                failures.withLock { $0 += 1 }
                                try await Task.sleep(for: .milliseconds(50))
                            }
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let stats = stack.simulator.stats()
            let endpointHits = stats.count("oauth", 503, "temporarily_unavailable") + stats.tokensIssued
            print("FCM token endpoint 503 ×3: \(failures.withLock { $0 }) failed sends, \(endpointHits) token-endpoint hits, \(fcm.tokens.fetchCount) fetches")
            #expect(statuses.count == 200 && statuses.allSatisfy { $0 == 200 })
            #expect(failures.withLock { $0 } >= 200, "every sender saw the outage at least once")
            #expect(stats.tokensIssued == 1)
            // Back-off 0.5, 1, 2 s …: three failed fetches cost three hits plus the good one, not one per send.
            #expect(endpointHits <= 6)
            #expect(fcm.tokens.fetchCount == endpointHits)
            #expect(fcm.stats().tokenRefreshes == 1)
        }
    }

    /// `apps.<app>.fcm.token_uri` points the grant at another token endpoint
    /// than the service account names: the assertion's audience must be that
    /// endpoint, or it refuses every grant and no send can ever go.
    @Test("a token_uri override is the grant's audience too")
    func tokenURIOverrideIsTheAudience() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            var elsewhere = stack.account
            elsewhere.tokenURI = "https://oauth2.example.invalid/token"
            let fcm = try FCMClient(
                configuration: FCMClientConfiguration(baseURL: stack.baseURL, serviceAccount: elsewhere,
                                                      tokenURIOverride: stack.simulator.tokenURI),
                http: http, logger: .test)
            let status = try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(1))).status
            #expect(status == 200)
            #expect(stack.simulator.stats().tokensIssued == 1)
        }
    }

    @Test("access token refreshed before it expires")
    func refreshBeforeExpiry() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            // The client's clock starts 3,500 s in the past so its grants stay within the endpoint's time rules.
            let clock = ManualClock(Date().addingTimeInterval(-3500))
            let fcm = try stack.makeFCMClient(http: http, now: clock.closure)
            #expect(try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(1))).status == 200)
            clock.advance(seconds: 3000)  // the token (3,599 s) is still well within its life
            #expect(try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(2))).status == 200)
            #expect(stack.simulator.stats().tokensIssued == 1)
            clock.advance(seconds: 400)  // within 5 minutes of expiry: refreshed before use
            #expect(try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(3))).status == 200)
            #expect(stack.simulator.stats().tokensIssued == 2)
            #expect(fcm.stats().tokenRefreshes == 2)
        }
    }

    @Test("401 on a send: one new token, one retry, accepted")
    func unauthorizedRetriedOnce() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let fcm = try stack.makeFCMClient(http: http)
            #expect(try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(1))).status == 200)
            try stack.simulator.setScenarios([
                SimulatorScenario(provider: "fcm", fault: .httpError(status: 401, retryAfterSeconds: nil), count: 1)
            ])
            let response = try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(2)))
            #expect(response.status == 200)
            #expect(stack.simulator.stats().tokensIssued == 2)
            #expect(fcm.stats().requestsSent == 3)
        }
    }
}
