import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

/// `HMSClient` against the simulator's Push Kit and token endpoints, over real TLS and HTTP/2.
@Suite("HMS client against the simulator", .serialized)
struct HMSLiveTests {
    static let appID = "104000001"
    static let secret = "app+secret/=="

    func withHMS<T>(
        tokenLifetimeSeconds: Int = 3600, _ body: (LiveStack, HMSClient) async throws -> T
    ) async throws -> T {
        try await withLiveStack(configure: {
            $0.hmsApps = [SimulatorHMSApp(appID: Self.appID, clientSecret: Self.secret, tokenLifetimeSeconds: tokenLifetimeSeconds)]
        }) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let client = try HMSClient(
                configuration: HMSClientConfiguration(
                    appID: Self.appID, clientSecret: Self.secret, baseURL: stack.baseURL,
                    tokenURL: stack.baseURL + "/oauth2/v3/token"),
                http: http, logger: .test)
            return try await body(stack, client)
        }
    }

    static func body(token: String, title: String = "Hi") throws -> [UInt8] {
        try HMSTranslator.body(for: .init(
            token: token, title: title, body: "Hello", data: [("k", "v")], collapseKey: "orders", urgency: .high,
            ttlSeconds: 3600))
    }

    func classify(_ response: ProviderResponse) -> ProviderOutcome {
        ResponseClassifier.classifyHMS(response, now: Date())
    }

    @Test("a translated message is accepted with Push Kit's request id")
    func accepted() async throws {
        try await withHMS { stack, client in
            let outcome = classify(try await client.send(body: try Self.body(token: "hms-token-1")))
            guard case .accepted(let id?) = outcome else {
                Issue.record("expected accepted, got \(outcome)")
                return
            }
            #expect(id.hasPrefix("sim"))
            #expect(stack.simulator.stats().count("hms", 200, "80000000") == 1)
            #expect(stack.simulator.stats().tokensIssued == 1)
        }
    }

    @Test("an illegal token is invalidToken (80300007); partial success for one token is too (80100000)")
    func invalidTokens() async throws {
        try await withHMS { _, client in
            let all = classify(try await client.send(body: try Self.body(token: "dead-1")))
            #expect(all == .invalidToken(reason: ProviderReason("80300007"), since: nil))
            let two = #"{"message":{"data":"{}","token":["ok-1","invalid-2"]}}"#
            let partial = classify(try await client.send(body: Array(two.utf8)))
            #expect(partial == .invalidToken(reason: ProviderReason("80100000"), since: nil))
        }
    }

    @Test("an oversize body is rejected (80300008); flow control is transient with Retry-After; 81000001 is transient")
    func rejectedAndTransient() async throws {
        try await withHMS { _, client in
            let big = #"{"message":{"data":"\#(String(repeating: "x", count: 5000))","token":["t"]}}"#
            #expect(classify(try await client.send(body: Array(big.utf8))) == .rejected(reason: ProviderReason("80300008")))
            let flow = classify(try await client.send(body: try Self.body(token: "flow-1")))
            #expect(flow == .transient(reason: ProviderReason("HTTP503"), retryAfter: .seconds(1)))
            let innerError = classify(try await client.send(body: try Self.body(token: "internal-1")))
            #expect(innerError == .transient(reason: ProviderReason("81000001"), retryAfter: nil))
        }
    }

    @Test("an expired access token (401, 80200003): one new token, one re-send, accepted")
    func expiredTokenRefreshedOnce() async throws {
        // The simulator's tokens live 4 s; the client trusts a token for at least 50 s, so the
        // second send carries an expired one and learns it from Push Kit's answer. The new
        // token must outlive the re-send: with 1 s, a loaded machine (tests run in parallel)
        // let it expire too and the client rightly fetched a third.
        try await withHMS(tokenLifetimeSeconds: 4) { stack, client in
            #expect(classify(try await client.send(body: try Self.body(token: "t-1"))) == .accepted(providerMessageID: "sim1"))
            try await Task.sleep(for: .milliseconds(4500))
            let outcome = classify(try await client.send(body: try Self.body(token: "t-2")))
            guard case .accepted = outcome else {
                Issue.record("expected accepted, got \(outcome)")
                return
            }
            let stats = stack.simulator.stats()
            #expect(stats.count("hms", 401, "80200003") == 1)
            #expect(stats.tokensIssued == 2)
            #expect(client.tokens.fetchCount == 2)
            #expect(client.stats().requestsSent == 3)
        }
    }

    @Test("200 concurrent sends share one token fetch")
    func singleFlightTokenFetch() async throws {
        try await withHMS { stack, client in
            let outcomes = try await withThrowingTaskGroup(of: ProviderOutcome.self) { group in
                for n in 0..<200 {
                    group.addTask {
                        let (response, _) = try await resendingUnanswered {
                            try await client.send(body: try Self.body(token: "tok-\(n)"))
                        }
                        return ResponseClassifier.classifyHMS(response, now: Date())
                    }
                }
                return try await group.reduce(into: [ProviderOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 200)
            #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
            #expect(client.tokens.fetchCount == 1)
            #expect(stack.simulator.stats().tokensIssued == 1)
            #expect(stack.simulator.stats().count("hms-oauth", 200, "OK") == 1)
        }
    }

    @Test("wrong client secret: the token endpoint's 400 is a ProviderError with Huawei's error codes")
    func wrongSecret() async throws {
        try await withLiveStack(configure: { $0.hmsApps = [SimulatorHMSApp(appID: Self.appID, clientSecret: "other")] }) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let client = try HMSClient(
                configuration: HMSClientConfiguration(
                    appID: Self.appID, clientSecret: Self.secret, baseURL: stack.baseURL,
                    tokenURL: stack.baseURL + "/oauth2/v3/token"),
                http: http, logger: .test)
            do {
                _ = try await client.send(body: try Self.body(token: "t"))
                Issue.record("expected a token endpoint error")
            } catch let error as ProviderError {
                #expect(error.kind == .tokenEndpoint)
                #expect(error.httpStatus == 400)
                #expect(error.oauthError == "1101")
                #expect(error.message.contains("sub_error 12304"))
                #expect(!error.isRetriable)
            }
        }
    }
}
