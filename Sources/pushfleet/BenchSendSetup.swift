import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders
import PushSimulator

/// Dev credentials, the notification template and the device tokens of a
/// `bench send` run.
struct BenchSendSetup {
    static let app = "com.pushfleet.bench"
    static let projectID = "pushfleet-bench"
    static let clientEmail = "pushfleet-bench@pushfleet-bench.iam.gserviceaccount.com"

    let provider: Provider
    let apnsPrivateKeyPEM: String
    let account: FCMServiceAccount
    let credentials: BenchSink.Credentials
    let template: PushNotification
    let bodyBytes: Int

    init(provider: Provider, payloadBytes: Int) throws {
        self.provider = provider
        let apnsKey = DevCredentials.makeAPNsKey()
        let service = try DevCredentials.makeServiceAccount(
            projectID: Self.projectID, clientEmail: Self.clientEmail, tokenURI: "https://127.0.0.1/token")
        apnsPrivateKeyPEM = apnsKey.privateKeyPEM
        account = try FCMServiceAccount(json: Array(service.json.utf8))
        credentials = BenchSink.Credentials(
            apnsKeyID: "BENCHKEY01", apnsTeamID: "BENCHTEAM1", apnsPublicKeyPEM: apnsKey.publicKeyPEM,
            fcmClientEmail: Self.clientEmail, fcmPrivateKeyID: service.privateKeyID, fcmProjectID: Self.projectID,
            fcmPublicKeyPEM: service.publicKeyPEM)
        var n = PushNotification(
            id: UUID(), app: Self.app, createdAt: Date(), expiresAt: Date().addingTimeInterval(3600),
            recipients: [], alert: PushNotification.Alert(title: "Your order shipped", body: "Order #1234 is on its way."),
            badge: 1, data: [("order_id", .string("1234"))])
        // Pad the body to about `payloadBytes` with one more custom key.
        let context = TranslationContext(apnsTopic: Self.app, fcmProjectID: Self.projectID)
        let probe = Recipient(token: BenchTokens.token(0, for: provider), platform: provider == .apns ? .ios : .android)
        let base = (try? n.request(for: probe, context: context).get().body.count) ?? 0
        let padding = payloadBytes - base - #","pad":"""#.utf8.count
        if padding > 0 { n.data.append(("pad", .string(String(repeating: "x", count: padding)))) }
        template = n
        bodyBytes = (try? n.request(for: probe, context: context).get().body.count) ?? 0
    }

    /// A sender that translates notification i (a fresh id, one of 1,024
    /// tokens) and sends it through the real APNs or FCM client.
    func makeSender(http: HTTP2Client, sink: BenchSink, logger: Logger) throws -> BenchSender {
        let context = TranslationContext(apnsTopic: Self.app, fcmProjectID: Self.projectID)
        switch provider {
        case .apns:
            let client = try APNsClient(
                configuration: APNsClientConfiguration(
                    baseURL: sink.baseURL, teamID: credentials.apnsTeamID, keyID: credentials.apnsKeyID,
                    privateKeyPEM: apnsPrivateKeyPEM),
                http: http, logger: logger)
            return BenchSender(template: template, context: context, provider: provider, apns: client, fcm: nil)
        case .fcm:
            // The sink has no quota: lift FCM's 600,000/min project quota from the client's limiter.
            var policy = ProviderClientPolicy.fcmDefault
            policy.rateLimit = .apnsDefault
            // The grant's audience is the account's token_uri: the sink's, as a real account names Google's.
            var account = account
            account.tokenURI = sink.tokenURI
            let client = try FCMClient(
                configuration: FCMClientConfiguration(
                    baseURL: sink.baseURL, serviceAccount: account, policy: policy),
                http: http, logger: logger)
            return BenchSender(template: template, context: context, provider: provider, apns: nil, fcm: client)
        case .webpush, .hms:
            // These have senders of their own (BenchNewProviders.swift).
            throw BenchSetupError.unsupported(provider)
        }
    }
}

/// Translates and sends notification i, as `BatchPipeline` does per delivery.
struct BenchSender: Sendable {
    let template: PushNotification
    let context: TranslationContext
    let provider: Provider
    let apns: APNsClient?
    let fcm: FCMClient?

    func translate(_ i: Int) throws -> ProviderRequest {
        var n = template
        n.id = BenchTokens.notificationID(i)
        let recipient = Recipient(token: BenchTokens.token(i, for: provider), platform: provider == .apns ? .ios : .android)
        return try n.request(for: recipient, context: context).get()
    }

    /// Nanoseconds per request of translation alone (fresh id, PushCore), on this thread.
    func translationCost(count: Int) throws -> Double {
        let start = ContinuousClock.now
        var bytes = 0
        for i in 0..<count { bytes &+= try translate(i).body.count }
        let elapsed = ContinuousClock.now - start
        return bytes > 0 ? elapsed.seconds * 1e9 / Double(count) : 0
    }

    /// Sends notification i; returns the HTTP status.
    func send(_ i: Int) async throws -> Int {
        let request = try translate(i)
        if let apns { return try await apns.send(request).status }
        if let fcm { return try await fcm.send(request).status }
        return 0
    }

    /// The URL path, headers (with authorization) and body h2load should send.
    func h2loadRequest() async throws -> ProviderRequest {
        var request = try translate(0)
        if let apns {
            request.headers.append(("authorization", "bearer \(try apns.tokens.currentToken())"))
        } else if let fcm {
            request.headers.append(("authorization", "Bearer \(try await fcm.tokens.accessToken())"))
            request.headers.append(("content-type", "application/json; charset=utf-8"))
        }
        return request
    }
}

/// 1,024 fixed well-formed device tokens.
enum BenchTokens {
    static let apns: [String] = (0..<1024).map { i in
        var rng = SplitMix64(seed: UInt64(i) &+ 0x5EED)
        return (0..<4).map { _ in String(format: "%016llx", rng.next()) }.joined()
    }
    static let fcm: [String] = apns.map { "bench-fcm:" + $0 }

    /// A distinct notification id per index without `UUID()`, which opens
    /// /dev/urandom on every call here; a worker decodes ids, it never makes them.
    static func notificationID(_ i: Int) -> UUID {
        var rng = SplitMix64(seed: UInt64(truncatingIfNeeded: i) &+ 0xB3AC)
        let words = (rng.next(), rng.next())
        return withUnsafeBytes(of: words) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    static func token(_ i: Int, for provider: Provider) -> String {
        provider == .apns ? apns[i & 1023] : fcm[i & 1023]
    }
}

/// A provider `BenchSendSetup` has no sender for.
enum BenchSetupError: Error, CustomStringConvertible {
    case unsupported(Provider)
    var description: String {
        switch self {
        case .unsupported(let provider): "bench send: \(provider.rawValue) has its own sender, not BenchSendSetup's"
        }
    }
}
