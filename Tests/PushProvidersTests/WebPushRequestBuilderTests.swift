import Foundation
import PushCore
import PushSimulator
import Testing

@testable import PushProviders

@Suite("Web Push request builder (RFC 8030)")
struct WebPushRequestBuilderTests {
    static func builder() throws -> WebPushRequestBuilder {
        WebPushRequestBuilder(
            vapid: try VAPIDSigner(privateKeyPEM: DevCredentials.makeAPNsKey().privateKeyPEM, subject: "mailto:a@b.c"))
    }

    static func subscription(endpoint: String = "https://push.example.net/wp/sub-1") throws -> (
        WebPushSubscription, WebPushDecryptor
    ) {
        let userAgent = try WebPushECDHKey.generate()
        let auth = WebPushPrimitives.randomBytes(16)
        let subscription = try WebPushSubscription(
            endpoint: endpoint, p256dh: Base64URL.encode(userAgent.publicKey),
            auth: Base64URL.encode(auth))
        return (subscription, try WebPushDecryptor(privateKey: userAgent, authSecret: auth))
    }

    @Test("method, URL, headers in order, and a body the subscription decrypts")
    func request() throws {
        let builder = try Self.builder()
        let (subscription, decryptor) = try Self.subscription()
        let request = try builder.request(
            to: subscription, payload: Array(#"{"title":"Hi"}"#.utf8), ttl: 3600, urgency: .high, topic: "news_1")
        #expect(request.method == "POST")
        #expect(request.url == "https://push.example.net/wp/sub-1")
        #expect(request.headers.map(\.name) == [
            "ttl", "urgency", "topic", "content-encoding", "content-type", "authorization",
        ])
        #expect(request.header("ttl") == "3600")
        #expect(request.header("urgency") == "high")
        #expect(request.header("topic") == "news_1")
        #expect(request.header("content-encoding") == "aes128gcm")
        #expect(request.header("content-type") == "application/octet-stream")
        #expect(request.header("authorization")?.hasPrefix("vapid t=") == true)
        #expect(request.header("authorization")?.hasSuffix(", k=\(builder.vapid.publicKeyBase64URL)") == true)
        #expect(try decryptor.decrypt(request.body) == Array(#"{"title":"Hi"}"#.utf8))
        let http = request.httpRequest
        #expect(http.url == request.url && http.body == request.body && http.method == "POST")

        let plain = try builder.request(to: subscription, payload: [], ttl: 0)
        #expect(plain.header("urgency") == "normal")
        #expect(plain.header("topic") == nil)
        #expect(plain.header("ttl") == "0")
        #expect(try decryptor.decrypt(plain.body) == [])
    }

    @Test("injected ephemeral key and salt make the body deterministic")
    func deterministic() throws {
        let builder = try Self.builder()
        let (subscription, _) = try Self.subscription()
        let key = try WebPushECDHKey.generate()
        let salt = [UInt8](repeating: 9, count: 16)
        let a = try builder.request(to: subscription, payload: [1, 2, 3], ttl: 60, ephemeralKey: key, salt: salt)
        let b = try builder.request(to: subscription, payload: [1, 2, 3], ttl: 60, ephemeralKey: key, salt: salt)
        #expect(a.body == b.body)
        #expect(Array(a.body.prefix(16)) == salt)
        #expect(Array(a.body[21..<86]) == key.publicKey)
    }

    @Test("endpoints: https with a host, no userinfo or fragment; the origin is the VAPID audience")
    func endpoints() throws {
        #expect(try WebPushEndpoint("https://fcm.googleapis.com/fcm/send/abc:def").origin == "https://fcm.googleapis.com")
        #expect(try WebPushEndpoint("https://Updates.Push.Services.Mozilla.com:443/wpush/v2/x").origin
            == "https://updates.push.services.mozilla.com")
        #expect(try WebPushEndpoint("https://127.0.0.1:8443/wp/x").origin == "https://127.0.0.1:8443")
        #expect(try WebPushEndpoint("https://[::1]:8443/wp/x").origin == "https://[::1]:8443")
        for bad in [
            "http://push.example.net/x", "https:///x", "https://user:pw@push.example.net/x",
            "https://push.example.net/x#frag", "push.example.net/x", "", "https://push.example.net/a b",
            "ftp://push.example.net/x",
        ] {
            do throws(WebPushError) {
                _ = try WebPushEndpoint(bad)
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.kind == .invalidEndpoint, "\(bad)")
                #expect(error.field == "endpoint")
            }
        }
        #expect(throws: WebPushError.self) {
            try WebPushSubscription(endpoint: "http://x.example/y", p256dh: "AA", auth: "AA")
        }
    }

    @Test("topic: 1–32 base64url characters; TTL ≥ 0; oversized payload named")
    func parameterValidation() throws {
        let builder = try Self.builder()
        let (subscription, _) = try Self.subscription()
        func failure(ttl: Int = 60, topic: String? = nil, size: Int = 10) -> String? {
            do throws(WebPushError) {
                _ = try builder.request(
                    to: subscription, payload: [UInt8](repeating: 0x61, count: size), ttl: ttl, topic: topic)
                return nil
            } catch {
                return "\(error.kind) \(error.field ?? "-")"
            }
        }
        #expect(failure(topic: String(repeating: "a", count: 32)) == nil)
        #expect(failure(topic: "A-z_09") == nil)
        #expect(failure(topic: String(repeating: "a", count: 33)) == "invalidTopic topic")
        #expect(failure(topic: "") == "invalidTopic topic")
        #expect(failure(topic: "has space") == "invalidTopic topic")
        #expect(failure(topic: "a+b") == "invalidTopic topic")
        #expect(failure(topic: "abc=") == "invalidTopic topic")
        #expect(failure(topic: "é") == "invalidTopic topic")
        #expect(failure(ttl: -1) == "invalidTTL ttl")
        #expect(failure(size: 3993) == nil)
        #expect(failure(size: 3994) == "plaintextTooLarge(size: 3994, limit: 3993) plaintext")
    }
}
