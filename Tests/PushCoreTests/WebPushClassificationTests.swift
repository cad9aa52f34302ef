import Foundation
import Testing

@testable import PushCore

@Suite("Web Push classification and payload")
struct WebPushClassificationTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func classify(_ status: Int, _ headers: [(name: String, value: String)] = [], body: String = "")
        -> ProviderOutcome
    {
        ResponseClassifier.classifyWebPush(
            ProviderResponse(status: status, headers: headers, body: Array(body.utf8)), now: now)
    }

    @Test("201 and 202 are accepted with the Location as message id")
    func accepted() {
        #expect(Self.classify(201, [("location", "https://push.example.net/m/abc")])
            == .accepted(providerMessageID: "https://push.example.net/m/abc"))
        #expect(Self.classify(202, [("location", "/m/1")]) == .accepted(providerMessageID: "/m/1"))
        #expect(Self.classify(201) == .accepted(providerMessageID: nil))
    }

    @Test("404 and 410 invalidate the subscription")
    func gone() {
        #expect(Self.classify(404) == .invalidToken(reason: ProviderReason("NotFound"), since: nil))
        #expect(Self.classify(410, body: #"{"errno":106}"#) == .invalidToken(reason: ProviderReason("Gone"), since: nil))
    }

    @Test("400 and 413 are rejected")
    func rejected() {
        #expect(Self.classify(400) == .rejected(reason: ProviderReason("BadRequest")))
        #expect(Self.classify(413) == .rejected(reason: ProviderReason("PayloadTooLarge")))
    }

    @Test("401 and 403 are VAPID auth failures")
    func auth() {
        #expect(Self.classify(401) == .authFailure(reason: ProviderReason("Unauthorized")))
        #expect(Self.classify(403) == .authFailure(reason: ProviderReason("Forbidden")))
    }

    @Test("429 and every 5xx are transient, honouring Retry-After in seconds or as a date")
    func transient() {
        #expect(Self.classify(429, [("retry-after", "30")])
            == .transient(reason: ProviderReason("TooManyRequests"), retryAfter: .seconds(30)))
        #expect(Self.classify(429) == .transient(reason: ProviderReason("TooManyRequests"), retryAfter: nil))
        #expect(Self.classify(503, [("retry-after", "Sun, 15 Jun 2025 15:23:20 GMT")])
            == .transient(reason: ProviderReason("ServiceUnavailable"), retryAfter: .seconds(1000)))
        for status in [500, 502, 504, 507, 599] {
            guard case .transient = Self.classify(status) else {
                Issue.record("\(status) not transient")
                continue
            }
        }
        #expect(Self.classify(507) == .transient(reason: ProviderReason("HTTP507"), retryAfter: nil))
    }

    @Test("anything else is unknown, kept verbatim")
    func unknown() {
        for status in [0, 100, 200, 204, 301, 302, 405, 408, 415, 600, -1] {
            #expect(Self.classify(status) == .unknown(status: status, reason: ProviderReason("HTTP\(status)")))
        }
    }

    @Test("the service-worker payload has the documented shape, absent members left out")
    func payload() throws {
        let full = WebPushNotificationPayload(
            id: "n-1", title: "Hi \"there\"", body: "Body", icon: "https://x/i.png", image: "https://x/m.png",
            badge: "https://x/b.png", tag: "t", url: "https://x/open", data: ["z": "1", "a": "2"])
        #expect(String(decoding: full.encoded(), as: UTF8.self)
            == #"{"id":"n-1","title":"Hi \"there\"","body":"Body","icon":"https://x/i.png","image":"https://x/m.png","badge":"https://x/b.png","tag":"t","url":"https://x/open","data":{"a":"2","z":"1"}}"#)
        let minimal = WebPushNotificationPayload(title: "")
        #expect(String(decoding: minimal.encoded(), as: UTF8.self) == #"{"title":""}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(full.encoded())) as? [String: Any]
        #expect((parsed?["data"] as? [String: String])?["z"] == "1")
    }
}
