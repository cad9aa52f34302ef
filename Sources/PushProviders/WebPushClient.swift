import Foundation
import Logging
import PushCore
import PushHTTP

/// As whom a `WebPushClient` sends: the app's VAPID key pair and contact.
public struct WebPushClientConfiguration: Sendable {
    /// The VAPID private key (PEM, P-256): the key browsers subscribed with
    /// (its public half is the page's `applicationServerKey`).
    public var vapidPrivateKeyPEM: String
    /// `mailto:…` or `https://…`: whom a push service contacts about this sender.
    public var subject: String
    /// Zero bytes added inside each encrypted record, to hide short payloads' lengths.
    public var padding: Int
    /// Rate limit and circuit breaker, per push service (endpoint origin).
    public var policy: ProviderClientPolicy
    /// The push services' hosts an endpoint may name: a host matches an entry
    /// equal to it or a parent domain of it (`notify.windows.com` admits
    /// `wns2-by3p.notify.windows.com`). nil admits any host. An endpoint
    /// comes from a producer's message: without a list, a message could make
    /// the worker POST to any https host it can reach.
    public var allowedHosts: [String]?

    public init(vapidPrivateKeyPEM: String, subject: String, padding: Int = 0, policy: ProviderClientPolicy = .webPushDefault,
                allowedHosts: [String]? = nil) {
        self.vapidPrivateKeyPEM = vapidPrivateKeyPEM
        self.subject = subject
        self.padding = padding
        self.policy = policy
        self.allowedHosts = allowedHosts
    }

    /// The push services of the browsers in use today: Chrome, Edge (on
    /// Android), Opera and Samsung Internet use FCM; Firefox Mozilla's
    /// autopush; Safari Apple's; Edge on Windows WNS.
    public static let knownPushServiceHosts = [
        "fcm.googleapis.com", "push.services.mozilla.com", "push.apple.com", "notify.windows.com",
    ]

    /// Whether `host` (lower-case, as `WebPushEndpoint` gives it) is `allowed` or under one of them.
    public static func admits(host: String, allowed: [String]) -> Bool {
        allowed.contains { entry in
            let entry = entry.lowercased()
            return host == entry || (host.hasSuffix(entry) && host.utf8.dropLast(entry.utf8.count).last == UInt8(ascii: "."))
        }
    }
}

extension ProviderClientPolicy {
    /// Web Push: no client-side rate limit, default breaker, per push service.
    public static let webPushDefault = ProviderClientPolicy(rateLimit: .apnsDefault)
}

/// Sends Web Push messages (RFC 8030) for one app: encrypts each payload for
/// its subscription (RFC 8291, `aes128gcm`), signs VAPID for the endpoint's
/// origin (RFC 8292), and posts to the endpoint. Endpoints live on many hosts
/// (each browser vendor runs its own push service), so the rate limiter and
/// circuit breaker are per origin: one service's outage does not hold back
/// the others. The libcurl pool keeps per-host connections.
public final class WebPushClient: Sendable {
    public let vapid: VAPIDSigner
    private let http: HTTP2Client
    private let logger: Logger
    private let policy: ProviderClientPolicy
    private let padding: Int
    private let allowedHosts: [String]?
    private let guards = Locked<[String: ProviderGuard]>([:])

    /// - Throws: `ProviderError.invalidConfiguration` naming the bad key, subject, padding or policy.
    public init(configuration: WebPushClientConfiguration, http: HTTP2Client, logger: Logger,
                now: @escaping @Sendable () -> Date = Date.init) throws {
        do {
            vapid = try VAPIDSigner(privateKeyPEM: configuration.vapidPrivateKeyPEM, subject: configuration.subject, now: now)
        } catch {
            throw ProviderError.invalidConfiguration("webpush.\(error.field ?? "vapid")", error.message)
        }
        guard (0...WebPushTranslator.maxPlaintextBytes).contains(configuration.padding) else {
            throw ProviderError.invalidConfiguration("webpush.padding", "must be 0-\(WebPushTranslator.maxPlaintextBytes)")
        }
        do { try configuration.policy.validate() } catch {
            throw ProviderError.invalidConfiguration("webpush.policy", "\(error)")
        }
        self.http = http
        self.logger = logger
        self.policy = configuration.policy
        self.padding = configuration.padding
        self.allowedHosts = configuration.allowedHosts
    }

    /// The request as it goes on the wire: the body encrypted for
    /// `request.webKeys` (a fresh key and salt each time), the translation's
    /// `ttl`/`urgency`/`topic` headers, `content-encoding: aes128gcm` and the
    /// VAPID `authorization` for the endpoint's origin.
    /// - Throws: `WebPushError` naming the problem: an endpoint or keys no
    ///   browser made (a point off the curve), a payload too large with the
    ///   padding, or a failed cryptographic step.
    public func seal(_ request: ProviderRequest) throws(WebPushError) -> ProviderRequest {
        guard let keys = request.webKeys else {
            throw WebPushError.invalid(.invalidP256DH, field: "keys", "the request carries no subscription keys")
        }
        let endpoint = try WebPushEndpoint(request.path)
        if let allowedHosts, !WebPushClientConfiguration.admits(host: endpoint.host, allowed: allowedHosts) {
            throw WebPushError.invalid(.endpointNotAllowed, field: "endpoint",
                                       "\(endpoint.host) is not an allowed push service (webpush.allowed_hosts)")
        }
        let subscriptionKeys = try WebPushSubscriptionKeys(p256dh: keys.p256dh, auth: keys.auth)
        let plaintextRoom = WebPushTranslator.maxPlaintextBytes - padding
        let padding = request.body.count > plaintextRoom ? max(0, WebPushTranslator.maxPlaintextBytes - request.body.count) : padding
        let body = try WebPushEncryption.encrypt(request.body, for: subscriptionKeys, padding: padding)
        var headers = request.headers.filter { !["authorization", "content-encoding", "content-type"].contains($0.name) }
        headers.append(("content-encoding", "aes128gcm"))
        headers.append(("content-type", "application/octet-stream"))
        headers.append(("authorization", try vapid.authorization(audience: endpoint.origin)))
        return ProviderRequest(provider: .webpush, path: endpoint.url, headers: headers, body: body)
    }

    /// Posts a sealed request to its endpoint after a rate-limit slot of the
    /// endpoint's push service; re-sends at once what got no HTTP status; any
    /// answer is returned as is, for `ResponseClassifier.classifyWebPush`.
    /// `priority`: its place while it waits for a stream slot of its host.
    /// - Throws: `HTTPError` for transport failures, `ProviderError` when the
    ///   push service's circuit is open or its rate limit holds the request
    ///   back; `.gateClosed` when `gate` closed before the request could go.
    public func send(_ request: ProviderRequest, gate: SendGate? = nil,
                     priority: HTTPRequestPriority = .urgent) async throws -> ProviderResponse {
        let guardian = try guardFor(url: request.path)
        try await guardian.admit()
        try guardian.pass(gate)
        let response = try await guardian.execute(
            HTTPRequest(method: "POST", url: request.path, headers: request.headers, body: request.body), on: http, gate: gate, priority: priority)
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The guard of the URL's push service, made on first use: the
    /// `allowedHosts` entry its host is under (every `*.notify.windows.com`
    /// endpoint shares one, whatever its port), so a producer's endpoints can
    /// make no more guards than the list has entries. With no list, one per
    /// origin, at most `maxUnlistedServices` of them: past that, guards whose
    /// circuit is closed are dropped (a request holding one still finishes).
    private func guardFor(url: String) throws -> ProviderGuard {
        let endpoint: WebPushEndpoint
        do { endpoint = try WebPushEndpoint(url) } catch {
            throw ProviderError.invalidConfiguration("endpoint", error.message)
        }
        // The allow-list entry (`seal` refused endpoints under none), or with no list the origin.
        let service = allowedHosts?.first { WebPushClientConfiguration.admits(host: endpoint.host, allowed: [$0]) }
            .map { "https://" + $0.lowercased() } ?? endpoint.origin
        if let existing = guards.withLock({ $0[service] }) { return existing }
        var serviceLogger = logger
        serviceLogger[metadataKey: "webpush.service"] = "\(service)"
        let made = try ProviderGuard(host: service, policy: policy, logger: serviceLogger)
        return guards.withLock { guards in
            if let existing = guards[service] { return existing }
            if guards.count >= Self.maxUnlistedServices {
                for (key, idle) in guards where idle.isAcceptingWork { guards[key] = nil }
            }
            guards[service] = made
            return made
        }
    }

    /// When a parked send to the push service `service` (as a held send's
    /// error named it, `ProviderError.host`) may come back; nil when it may
    /// now (counted, see `ProviderGuard.releaseParked`), or when no guard is
    /// kept for it (none refused anything lately).
    public func releaseParked(service: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guards.withLock { $0[service] }?.releaseParked(now: now)
    }

    /// The most guards kept for origins when no allow-list bounds them.
    static let maxUnlistedServices = 1_024

    /// Counters per push service, for metrics: keyed by its allow-list entry
    /// (or origin) without `https://` (`push.services.mozilla.com`): metric
    /// labels keep 40 characters.
    public func stats() -> [(host: String, stats: ProviderClientStats)] {
        guards.withLock { $0.map { (String($0.key.dropFirst("https://".count)), $0.value) } }
            .sorted { $0.0 < $1.0 }.map { ($0.0, $0.1.snapshot()) }
    }

    /// False while every push service's circuit is open (and at least one is known).
    public var isAcceptingWork: Bool {
        let all = guards.withLock { Array($0.values) }
        return all.isEmpty || all.contains { $0.isAcceptingWork }
    }
}
