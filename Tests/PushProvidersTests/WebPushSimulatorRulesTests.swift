import Foundation
import PushCore
import PushSimulator
import Testing

@testable import PushProviders

/// The simulator's Web Push checks, one by one, without sockets.
@Suite("Simulator Web Push rules")
struct WebPushSimulatorRulesTests {
    static let port = 8443
    static let origin = "https://127.0.0.1:\(port)"
    static let now = Date(timeIntervalSince1970: 1_760_000_000)

    let key = DevCredentials.makeAPNsKey()
    let inbox = SimulatorWebPushInbox(capacity: 3)

    func rules(allowAnyKey: Bool = false, fastMode: Bool = false) throws -> SimulatorRules {
        let signer = try signer()
        var configuration = SimulatorConfiguration(fastMode: fastMode)
        configuration.webPushVAPIDKeys = allowAnyKey ? [] : [signer.publicKeyBase64URL]
        configuration.webPushInbox = inbox
        let rules = try SimulatorRules(configuration: configuration)
        rules.serverPort = Self.port
        return rules
    }

    func signer(clock: Date = now, pem: String? = nil) throws -> VAPIDSigner {
        try VAPIDSigner(privateKeyPEM: pem ?? key.privateKeyPEM, subject: "mailto:a@b.c", now: { clock })
    }

    func request(
        id: String = "sub-1", payload: [UInt8] = Array("hello".utf8), signer: VAPIDSigner? = nil,
        edit: (inout SimulatorRequest) -> Void = { _ in }
    ) throws -> SimulatorRequest {
        let minted = SimulatorWebPushSubscriptions.subscription(id: id, origin: Self.origin)
        let subscription = try WebPushSubscription(endpoint: minted.endpoint, p256dh: minted.p256dh, auth: minted.auth)
        let built = try WebPushRequestBuilder(vapid: signer ?? self.signer()).request(
            to: subscription, payload: payload, ttl: 30)
        var request = SimulatorRequest(method: "POST", path: "/wp/\(id)", headers: built.headers, body: built.body)
        edit(&request)
        return request
    }

    func answer(_ request: SimulatorRequest, rules: SimulatorRules? = nil) throws -> SimulatorResponse {
        try (rules ?? self.rules()).respond(to: request, now: Self.now)
    }

    @Test("subscriptions are deterministic per id and differ between ids")
    func deterministicSubscriptions() throws {
        let a = SimulatorWebPushSubscriptions.subscription(id: "x", origin: Self.origin)
        let b = SimulatorWebPushSubscriptions.subscription(id: "x", origin: Self.origin)
        let c = SimulatorWebPushSubscriptions.subscription(id: "y", origin: Self.origin)
        #expect(a.endpoint == "\(Self.origin)/wp/x")
        #expect(a.p256dh == b.p256dh && a.auth == b.auth)
        #expect(a.p256dh != c.p256dh && a.auth != c.auth)
        _ = try WebPushSubscriptionKeys(p256dh: a.p256dh, auth: a.auth)
    }

    @Test("a good request is decrypted and recorded; the inbox is bounded")
    func accepted() throws {
        let rules = try rules()
        for n in 0..<5 {
            let response = try answer(request(payload: Array("m\(n)".utf8)), rules: rules)
            #expect(response.status == 201)
            #expect(response.header("location") != nil)
        }
        #expect(inbox.deliveries.map { String(decoding: $0.plaintext, as: UTF8.self) } == ["m0", "m1", "m2"])
        #expect(inbox.notRecorded == 2)
        #expect(rules.stats().responses["webpush|201|Created"] == 5)
    }

    @Test("missing TTL, a bad TTL, urgency or topic, a wrong Content-Encoding: 400")
    func headerChecks() throws {
        func reason(_ edit: (inout SimulatorRequest) -> Void) throws -> String {
            let response = try answer(request(edit: edit))
            #expect(response.status == 400)
            return response.reason
        }
        #expect(try reason { $0.headers.removeAll { $0.name == "ttl" } } == "MissingTTL")
        #expect(try reason { $0.headers = $0.headers.map { $0.name == "ttl" ? ("ttl", "-1") : $0 } } == "BadTTL")
        #expect(try reason { $0.headers = $0.headers.map { $0.name == "urgency" ? ($0.name, "urgent") : $0 } }
            == "BadUrgency")
        #expect(try reason { $0.headers.append(("topic", String(repeating: "t", count: 33))) } == "BadTopic")
        #expect(try reason { $0.headers = $0.headers.map { $0.name == "content-encoding" ? ($0.name, "aesgcm") : $0 } }
            == "BadContentEncoding")
    }

    @Test("a body that does not decrypt (altered, wrong subscription, bad keyid) is 400 DecryptionFailed")
    func decryption() throws {
        var altered = try request()
        altered.body[altered.body.count - 3] ^= 0x40
        #expect(try answer(altered).reason == "DecryptionFailed")
        // Encrypted for sub-1, posted to sub-2.
        var misrouted = try request(id: "sub-1")
        misrouted.path = "/wp/sub-2"
        #expect(try answer(misrouted).reason == "DecryptionFailed")
        var shortKeyID = try request()
        shortKeyID.body[20] = 64
        #expect(try answer(shortKeyID).reason == "DecryptionFailed")
        #expect(inbox.deliveries.isEmpty)
    }

    @Test("VAPID: expired, more than 24 h ahead, other audience, other key, bad signature, bad subject: 403")
    func vapidChecks() throws {
        let expired = try request(signer: signer(clock: Self.now.addingTimeInterval(-13 * 3600)))
        #expect(try answer(expired).reason == "ExpiredJWT")
        let tooFar = try request(signer: signer(clock: Self.now.addingTimeInterval(12 * 3600 + 60)))
        #expect(try answer(tooFar).reason == "BadExpiry")
        let stranger = try request(signer: signer(pem: DevCredentials.makeAPNsKey().privateKeyPEM))
        #expect(try answer(stranger).reason == "VAPIDKeyNotAllowed")
        #expect(try answer(stranger, rules: rules(allowAnyKey: true)).status == 201)

        // Hand-made tokens for what the signer never produces.
        let evp = try EVPKey(pem: key.privateKeyPEM, kind: .privateKey)
        let k = try signer().publicKeyBase64URL
        func token(aud: String = Self.origin, exp: Int = 1_760_000_000 + 3600, sub: String = "mailto:a@b.c") throws
            -> String
        {
            let jwt = try JWT.es256(
                header: [("typ", .string("JWT")), ("alg", .string("ES256"))],
                claims: [("aud", .string(aud)), ("exp", .int(exp)), ("sub", .string(sub))], key: evp)
            return "vapid t=\(jwt), k=\(k)"
        }
        func reason(_ authorization: String) throws -> String {
            let response = try answer(request { request in
                request.headers = request.headers.map { $0.name == "authorization" ? ($0.name, authorization) : $0 }
            })
            #expect(response.status == 403, "\(response.bodyText)")
            return response.reason
        }
        let good = try token()
        let handMade = try answer(request { request in
            request.headers = request.headers.map { $0.name == "authorization" ? ($0.name, good) : $0 }
        })
        #expect(handMade.status == 201)
        #expect(try reason(token(aud: "https://127.0.0.1:9999")) == "BadAudience")
        #expect(try reason(token(aud: "https://127.0.0.1:8443/path")) == "BadAudience")
        #expect(try reason(token(aud: "http://127.0.0.1:8443")) == "BadAudience")
        #expect(try reason(token(sub: "tel:123")) == "BadSubject")
        let tampered = good.replacingOccurrences(of: "vapid t=", with: "vapid t=X")
        #expect(try reason(tampered) == "BadJWT")
        let swappedSignature = String(good.prefix(while: { $0 != "," }).dropLast(4)) + "AAAA, k=\(k)"
        #expect(try reason(swappedSignature) == "BadJWTSignature")
        #expect(try reason("vapid k=\(k)") == "BadVAPIDHeader")
        #expect(try reason("vapid t=a.b.c, k=AAAA") == "BadVAPIDKey")
        // No vapid credential at all: 401.
        let bearer = try answer(request { request in
            request.headers = request.headers.map { $0.name == "authorization" ? ($0.name, "Bearer abc") : $0 }
        })
        #expect(bearer.status == 401)
    }

    @Test("fast mode answers 201 without any check; other paths are not Web Push")
    func fastMode() throws {
        let rules = try rules(fastMode: true)
        let response = rules.respond(to: SimulatorRequest(method: "POST", path: "/wp/anything"), now: Self.now)
        #expect(response.status == 201)
        #expect(response.provider == "webpush")
        #expect(rules.respond(to: SimulatorRequest(method: "POST", path: "/wp/"), now: Self.now).status == 404)
        #expect(inbox.deliveries.isEmpty)
    }

    @Test("a configured VAPID key that is not a P-256 point is refused, naming the key")
    func badConfiguration() {
        var configuration = SimulatorConfiguration()
        configuration.webPushVAPIDKeys = ["AAAA"]
        #expect(throws: (any Error).self) { try SimulatorRules(configuration: configuration) }
    }
}
