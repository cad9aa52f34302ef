import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("FCM against the simulator", .serialized)
struct FCMLiveTests {
    @Test("200 concurrent sends share one OAuth token and all get a message name")
    func concurrentSendsOneToken() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let fcm = try stack.makeFCMClient(http: http)
            let count = 200
            let start = ContinuousClock.now
            let names = try await withThrowingTaskGroup(of: String?.self) { group in
                for n in 0..<count {
                    group.addTask {
                        let (response, _) = try await resendingUnanswered {
                            try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(n)))
                        }
                        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
                        let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                        return body?["name"] as? String
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            print("FCM: \(count) concurrent sends (incl. one OAuth grant) in \(ContinuousClock.now - start)")
            #expect(names.count == count)
            #expect(names.allSatisfy { $0?.hasPrefix("projects/\(LiveStack.projectID)/messages/") == true })
            #expect(Set(names).count == count)
            let stats = stack.simulator.stats()
            #expect(stats.tokensIssued == 1)
            #expect(stats.fcmAccepted == count)
            #expect(fcm.tokens.fetchCount == 1)
            #expect(http.stats().connectionsOpened <= 3)
            // Later sends reuse the cached token.
            let again = try await resendingUnanswered { try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(999_999))) }
            #expect(again.0.status == 200)
            #expect(stack.simulator.stats().tokensIssued == 1)
        }
    }

    @Test("a token the endpoint rejects is refetched on 401 and the send retried once")
    func invalidatedTokenRefetched() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let fcm = try stack.makeFCMClient(http: http)
            let first = try await fcm.tokens.accessToken()
            #expect(try await fcm.tokens.accessToken() == first)
            fcm.tokens.invalidate(token: "some-other-token")  // not the current one: ignored
            #expect(try await fcm.tokens.accessToken() == first)
            fcm.tokens.invalidate(token: first)
            let second = try await fcm.tokens.accessToken()
            #expect(second != first)
            #expect(stack.simulator.stats().tokensIssued == 2)
        }
    }

    @Test("a grant signed with a key the endpoint does not know fails with invalid_grant, not retriable")
    func invalidGrant() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let stranger = try DevCredentials.makeServiceAccount(
                projectID: LiveStack.projectID, clientEmail: LiveStack.clientEmail, tokenURI: stack.simulator.tokenURI)
            var account = try FCMServiceAccount(json: Array(stranger.json.utf8))
            account.privateKeyID = stack.account.privateKeyID  // right kid, wrong key
            let fcm = try FCMClient(
                configuration: FCMClientConfiguration(baseURL: stack.baseURL, serviceAccount: account),
                http: http, logger: .test)
            do {
                _ = try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(1)))
                Issue.record("expected invalid_grant")
            } catch let error as ProviderError {
                #expect(error.kind == .tokenEndpoint)
                #expect(error.httpStatus == 400)
                #expect(error.oauthError == "invalid_grant")
                #expect(!error.isRetriable)
            }
            #expect(stack.simulator.stats().fcmAccepted == 0)
        }
    }
}
