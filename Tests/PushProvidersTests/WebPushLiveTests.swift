import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

/// A Web Push request built by `WebPushRequestBuilder`, sent by `HTTP2Client`
/// over TLS + HTTP/2 to the simulator, which checks VAPID and decrypts with
/// its own (swift-crypto) implementation.
@Suite("Web Push against the simulator", .serialized)
struct WebPushLiveTests {
    struct Stack {
        let live: LiveStack
        let inbox: SimulatorWebPushInbox
        let builder: WebPushRequestBuilder
        let http: HTTP2Client

        func subscription(_ id: String) throws -> WebPushSubscription {
            let minted = SimulatorWebPushSubscriptions.subscription(id: id, origin: live.baseURL)
            return try WebPushSubscription(endpoint: minted.endpoint, p256dh: minted.p256dh, auth: minted.auth)
        }

        func send(_ request: WebPushRequest) async throws -> ProviderResponse {
            let (response, _) = try await resendingUnanswered {
                let answer = try await http.execute(request.httpRequest)
                return ProviderResponse(status: answer.status, headers: answer.headers, body: answer.body)
            }
            return response
        }
    }

    /// Runs `body` against a simulator that accepts only `vapid`'s key.
    func withWebPushStack(_ body: (Stack) async throws -> Void) async throws {
        let vapid = try VAPIDSigner(
            privateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "mailto:webpush@pushfleet.test")
        let inbox = SimulatorWebPushInbox()
        try await withLiveStack(configure: {
            $0.webPushVAPIDKeys = [vapid.publicKeyBase64URL]
            $0.webPushInbox = inbox
        }) { live in
            let http = try live.makeHTTPClient()
            defer { http.shutdown() }
            try await body(Stack(live: live, inbox: inbox, builder: WebPushRequestBuilder(vapid: vapid), http: http))
        }
    }

    @Test("the simulator decrypts exactly the plaintext sent, answers 201 with a Location: accepted")
    func delivered() async throws {
        try await withWebPushStack { stack in
            let payload = WebPushNotificationPayload(
                id: "n-42", title: "Your order shipped", body: "Arrives Tuesday", icon: "https://shop.example/i.png",
                tag: "order-7", data: ["order": "7"]
            ).encoded()
            let request = try stack.builder.request(
                to: stack.subscription("live-1"), payload: payload, ttl: 120, urgency: .high, topic: "order7",
                padding: 31)
            let response = try await stack.send(request)
            #expect(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
            let outcome = ResponseClassifier.classifyWebPush(response, now: Date())
            guard case .accepted(let messageID) = outcome else {
                Issue.record("not accepted: \(outcome)")
                return
            }
            #expect(messageID?.hasPrefix("/wp-message/") == true)
            let deliveries = stack.inbox.deliveries(subscriptionID: "live-1")
            #expect(deliveries.count == 1)
            #expect(deliveries.first?.plaintext == payload)
            #expect(deliveries.first?.ttl == 120)
            #expect(deliveries.first?.urgency == "high")
            #expect(deliveries.first?.topic == "order7")
            #expect(deliveries.first?.vapidKey == stack.builder.vapid.publicKeyBase64URL)
            // Many more, concurrently, over the same connections and one VAPID token.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<50 {
                    group.addTask {
                        let request = try stack.builder.request(
                            to: stack.subscription("live-\(n % 5)"), payload: Array("message \(n)".utf8), ttl: 60)
                        return try await stack.send(request).status
                    }
                }
                for try await status in group { #expect(status == 201) }
            }
            #expect(stack.inbox.deliveries.count == 51)
            #expect(Set(stack.inbox.deliveries.map { String(decoding: $0.plaintext, as: UTF8.self) })
                .isSuperset(of: (0..<50).map { "message \($0)" }))
            #expect(stack.builder.vapid.mintCount == 1)
            #expect(stack.live.simulator.stats().responses["webpush|201|Created"] == 51)
        }
    }

    @Test("gone- and missing- subscriptions answer 410 and 404: invalid subscription")
    func gone() async throws {
        try await withWebPushStack { stack in
            for (id, status, reason) in [("gone-1", 410, "Gone"), ("missing-1", 404, "NotFound")] {
                let request = try stack.builder.request(to: stack.subscription(id), payload: [1], ttl: 60)
                let response = try await stack.send(request)
                #expect(response.status == status)
                #expect(ResponseClassifier.classifyWebPush(response, now: Date())
                    == .invalidToken(reason: ProviderReason(reason), since: nil))
            }
            #expect(stack.inbox.deliveries.isEmpty)
        }
    }

    @Test("413 for a toolarge- subscription and for any body over 4096 bytes: rejected")
    func tooLarge() async throws {
        try await withWebPushStack { stack in
            let small = try stack.builder.request(to: stack.subscription("toolarge-1"), payload: [1], ttl: 60)
            let first = try await stack.send(small)
            #expect(first.status == 413)
            #expect(ResponseClassifier.classifyWebPush(first, now: Date())
                == .rejected(reason: ProviderReason("PayloadTooLarge")))
            // A sender that ignored the size rule: a 4097-byte body.
            var oversized = try stack.builder.request(to: stack.subscription("big-1"), payload: [1], ttl: 60)
            oversized.body += [UInt8](repeating: 0, count: 4097 - oversized.body.count)
            let second = try await stack.send(oversized)
            #expect(second.status == 413)
            // The largest payload the builder allows fits.
            let largest = try stack.builder.request(
                to: stack.subscription("big-2"), payload: [UInt8](repeating: 0x7A, count: 3993), ttl: 60)
            #expect(largest.body.count == 4096)
            #expect(try await stack.send(largest).status == 201)
            #expect(stack.inbox.deliveries(subscriptionID: "big-2").first?.plaintext.count == 3993)
        }
    }

    @Test("429 with Retry-After for ratelimited- and slow-: transient with the delay")
    func rateLimited() async throws {
        try await withWebPushStack { stack in
            for id in ["ratelimited-1", "slow-1"] {
                let request = try stack.builder.request(to: stack.subscription(id), payload: [1], ttl: 60)
                let response = try await stack.send(request)
                #expect(response.status == 429)
                #expect(response.header("retry-after") == "7")
                #expect(ResponseClassifier.classifyWebPush(response, now: Date())
                    == .transient(reason: ProviderReason("TooManyRequests"), retryAfter: .seconds(7)))
            }
        }
    }

    @Test("a VAPID key the simulator does not know gets 403, no VAPID at all 401: auth failure")
    func wrongKey() async throws {
        try await withWebPushStack { stack in
            let stranger = WebPushRequestBuilder(
                vapid: try VAPIDSigner(
                    privateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "https://stranger.example"))
            let request = try stranger.request(to: stack.subscription("live-9"), payload: [1], ttl: 60)
            let response = try await stack.send(request)
            #expect(response.status == 403)
            #expect(String(decoding: response.body, as: UTF8.self).contains("VAPIDKeyNotAllowed"))
            #expect(ResponseClassifier.classifyWebPush(response, now: Date())
                == .authFailure(reason: ProviderReason("Forbidden")))

            var anonymous = try stack.builder.request(to: stack.subscription("live-9"), payload: [1], ttl: 60)
            anonymous.headers.removeAll { $0.name == "authorization" }
            let unauthorized = try await stack.send(anonymous)
            #expect(unauthorized.status == 401)
            #expect(ResponseClassifier.classifyWebPush(unauthorized, now: Date())
                == .authFailure(reason: ProviderReason("Unauthorized")))
            #expect(stack.inbox.deliveries.isEmpty)
        }
    }
}
