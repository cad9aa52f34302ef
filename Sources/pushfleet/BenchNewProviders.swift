import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders
import PushSimulator

/// What `bench send` needs of a sender: one request per index, translation
/// cost alone, and one request's shape for h2load and the libcurl floor.
protocol BenchSending: Sendable {
    func send(_ i: Int) async throws -> Int
    func translationCost(count: Int) throws -> Double
    func sampleRequest() async throws -> BenchRequestShape
}

/// A request's path, headers (authorization included) and body, as h2load
/// and the floor loop send it.
struct BenchRequestShape: Sendable {
    var path: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

extension BenchSender: BenchSending {
    func sampleRequest() async throws -> BenchRequestShape {
        let request = try await h2loadRequest()
        return BenchRequestShape(path: request.path, headers: request.headers, body: request.body)
    }
}

/// Web Push: the notification as the service worker's JSON
/// payload, encrypted per message (RFC 8291: a fresh P-256 key and salt
/// each), VAPID-signed, POSTed to one of 1,024 subscriptions the simulator
/// can decrypt.
struct BenchWebPushSender: BenchSending {
    static let subject = "mailto:bench@pushfleet.invalid"
    let builder: WebPushRequestBuilder
    let subscriptions: [WebPushSubscription]
    let payload: [UInt8]
    let http: HTTP2Client

    init(sink: BenchSink, http: HTTP2Client, payloadBytes: Int) throws {
        let key = DevCredentials.makeAPNsKey()  // a P-256 key pair in PEM, as VAPID needs
        builder = WebPushRequestBuilder(vapid: try VAPIDSigner(privateKeyPEM: key.privateKeyPEM, subject: Self.subject))
        subscriptions = try (0..<1024).map { i in
            let s = SimulatorWebPushSubscriptions.subscription(id: "bench-\(i)", origin: sink.baseURL)
            return try WebPushSubscription(endpoint: s.endpoint, p256dh: s.p256dh, auth: s.auth)
        }
        var shown = WebPushNotificationPayload(
            title: "Your order shipped", body: "Order #1234 is on its way.", data: ["order_id": "1234"])
        let padding = payloadBytes - shown.encoded().count - #","pad":"""#.utf8.count
        if padding > 0 { shown.data["pad"] = String(repeating: "x", count: padding) }
        payload = shown.encoded()
        self.http = http
    }

    func request(_ i: Int) throws -> WebPushRequest {
        try builder.request(to: subscriptions[i & 1023], payload: payload, ttl: 3600, urgency: .high)
    }

    func send(_ i: Int) async throws -> Int {
        try await http.execute(try request(i).httpRequest).status
    }

    func translationCost(count: Int) throws -> Double {
        let start = ContinuousClock.now
        var bytes = 0
        for i in 0..<count { bytes &+= try request(i).body.count }
        return bytes > 0 ? (ContinuousClock.now - start).seconds * 1e9 / Double(count) : 0
    }

    func sampleRequest() async throws -> BenchRequestShape {
        let request = try request(0)
        let path = URL(string: request.url).map { $0.path } ?? "/"
        return BenchRequestShape(path: path, headers: request.headers, body: request.body)
    }
}

/// Huawei Push Kit: one message per token through `HMSClient`
/// (client-credentials token from the simulator's token endpoint).
struct BenchHMSSender: BenchSending {
    static let appID = "104000001"
    static let clientSecret = "bench-secret"
    let client: HMSClient
    let title = "Your order shipped", text = "Order #1234 is on its way."
    let data: [(key: String, value: String)]

    init(sink: BenchSink, http: HTTP2Client, payloadBytes: Int, logger: Logger) throws {
        client = try HMSClient(
            configuration: HMSClientConfiguration(
                appID: Self.appID, clientSecret: Self.clientSecret, baseURL: sink.baseURL,
                tokenURL: sink.baseURL + "/oauth2/v3/token"),
            http: http, logger: logger)
        let base = (try? HMSTranslator.body(for: .init(token: BenchTokens.apns[0], title: title, body: text,
                                                        data: [("order_id", "1234")])).count) ?? 0
        let padding = payloadBytes - base - 12
        data = [("order_id", "1234")] + (padding > 0 ? [("pad", String(repeating: "x", count: padding))] : [])
    }

    func body(_ i: Int) throws -> [UInt8] {
        try HMSTranslator.body(for: .init(token: "bench-hms-" + BenchTokens.apns[i & 1023], title: title, body: text,
                                          data: data, urgency: .high, ttlSeconds: 3600))
    }

    func send(_ i: Int) async throws -> Int { try await client.send(body: try body(i)).status }

    func translationCost(count: Int) throws -> Double {
        let start = ContinuousClock.now
        var bytes = 0
        for i in 0..<count { bytes &+= try body(i).count }
        return bytes > 0 ? (ContinuousClock.now - start).seconds * 1e9 / Double(count) : 0
    }

    func sampleRequest() async throws -> BenchRequestShape {
        BenchRequestShape(
            path: HMSTranslator.path(appID: Self.appID),
            headers: [("authorization", "Bearer \(try await client.tokens.accessToken())"),
                      ("content-type", "application/json; charset=utf-8")],
            body: try body(0))
    }
}
