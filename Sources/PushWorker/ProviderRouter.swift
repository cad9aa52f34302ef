import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders

/// The provider clients of every configured app. Connections are pooled per
/// APNs team or certificate (APNs allows one identity per connection), and one
/// pool each for FCM, Push Kit and Web Push (whose endpoints span many hosts;
/// libcurl keeps per-host connections within it).
final class ProviderRouter: Sendable {
    struct AppClients: Sendable {
        var context: TranslationContext
        var apns: APNsClient?
        var fcm: FCMClient?
        var webpush: WebPushClient?
        var hms: HMSClient?
    }

    let http: HTTP2ClientPool
    private let apps: [String: AppClients]
    private let configuration: WorkerConfiguration

    init(configuration: WorkerConfiguration, logger: Logger) throws {
        var httpConfiguration = HTTPClientConfiguration()
        httpConfiguration.caBundlePath = configuration.tls.caBundlePath
        httpConfiguration.maxConnectionsPerHost = configuration.tls.maxConnectionsPerHost
        httpConfiguration.proxy = configuration.tls.proxy
        let http = HTTP2ClientPool(base: httpConfiguration, logger: logger)
        var apps: [String: AppClients] = [:]
        do {
            for (name, app) in configuration.apps {
                var appLogger = logger
                appLogger[metadataKey: "push.app"] = "\(name)"
                var clients = AppClients(context: TranslationContext(apnsTopic: app.apns?.topic, fcmProjectID: nil))
                if let apns = app.apns {
                    let policy = Self.policy(.apnsDefault, configuration, rate: apns.rateLimitPerSecond ?? apns.fleetRateLimitPerSecond)
                    let apnsConfiguration: APNsClientConfiguration
                    if let certificate = apns.certificate {
                        var passphrase: String?
                        if let path = certificate.passphrasePath {
                            let data = try Self.secret(path, key: "apps.\(name).apns.certificate.passphrase_path")
                            passphrase = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
                        }
                        guard FileManager.default.isReadableFile(atPath: certificate.path) else {
                            throw ConfigurationError(key: "apps.\(name).apns.certificate.path", problem: "cannot read \(certificate.path)")
                        }
                        apnsConfiguration = APNsClientConfiguration(
                            baseURL: apns.baseURL,
                            certificate: APNsClientCertificate(
                                certificatePath: certificate.path, keyPath: certificate.keyPath,
                                format: certificate.format == "p12" ? .pkcs12 : .pem, passphrase: passphrase),
                            sandboxBaseURL: apns.sandboxBaseURL, policy: policy)
                    } else {
                        let pem = try Self.secret(apns.keyPath, key: "apps.\(name).apns.key_path")
                        apnsConfiguration = APNsClientConfiguration(
                            baseURL: apns.baseURL, teamID: apns.teamID, keyID: apns.keyID,
                            privateKeyPEM: String(decoding: pem, as: UTF8.self),
                            sandboxBaseURL: apns.sandboxBaseURL, policy: policy)
                    }
                    clients.apns = try Self.naming("apps.\(name).apns.\(apns.certificate == nil ? "key_path" : "certificate")") {
                        let connection = try http.client(for: apnsConfiguration.poolKey) {
                            apnsConfiguration.certificate?.apply(to: &$0)
                        }
                        return try APNsClient(configuration: apnsConfiguration, http: connection, logger: appLogger)
                    }
                }
                if let fcm = app.fcm {
                    let account: FCMServiceAccount
                    do { account = try FCMServiceAccount.load(path: fcm.serviceAccountPath) } catch {
                        throw ConfigurationError(key: "apps.\(name).fcm.service_account_path", problem: "\(error)")
                    }
                    clients.context.fcmProjectID = account.projectID
                    clients.fcm = try Self.naming("apps.\(name).fcm.service_account_path") {
                        try FCMClient(
                            configuration: FCMClientConfiguration(
                                baseURL: fcm.baseURL, serviceAccount: account, tokenURIOverride: fcm.tokenURI,
                                policy: Self.policy(.fcmDefault, configuration, rate: fcm.rateLimitPerSecond ?? fcm.fleetRateLimitPerSecond)),
                            http: try http.client(for: "fcm"), logger: appLogger)
                    }
                }
                if let webpush = app.webpush {
                    clients.webpush = try Self.webPushClient(webpush, app: name, configuration, http: http, logger: appLogger)
                }
                if let hms = app.hms {
                    clients.context.hmsAppID = hms.appID
                    clients.hms = try Self.hmsClient(hms, app: name, configuration, http: http, logger: appLogger)
                }
                apps[name] = clients
            }
        } catch {
            http.shutdown()
            throw error
        }
        self.http = http
        self.apps = apps
        self.configuration = configuration
    }

    func clients(for app: String) -> AppClients? { apps[app] }

    /// When a parked send of `party` may come back; nil when it may now (it
    /// is then counted as let back: while the party's circuit recovers only
    /// its probes go), or when the party has no client (the pipeline then
    /// records why).
    func releaseParked(_ party: HeldParty, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let clients = apps[party.app] else { return nil }
        switch party.provider {
        case .apns: return clients.apns?.releaseParked(now: now)
        case .fcm: return clients.fcm?.releaseParked(now: now)
        case .hms: return clients.hms?.releaseParked(now: now)
        case .webpush: return party.host.flatMap { clients.webpush?.releaseParked(service: $0, now: now) }
        }
    }

    /// The provider clients with a fleet-wide quota, with that quota in
    /// requests per second.
    private var fleetQuotas: [(client: any ProviderHolding, quota: Int)] {
        apps.sorted { $0.key < $1.key }.flatMap { name, clients -> [(client: any ProviderHolding, quota: Int)] in
            guard let app = configuration.apps[name] else { return [] }
            var out: [(client: any ProviderHolding, quota: Int)] = []
            if let client = clients.apns, let quota = app.apns?.fleetRateLimitPerSecond { out.append((client, quota)) }
            if let client = clients.fcm, let quota = app.fcm?.fleetRateLimitPerSecond { out.append((client, quota)) }
            if let client = clients.hms, let quota = app.hms?.fleetRateLimitPerSecond { out.append((client, quota)) }
            return out
        }
    }

    /// Whether any client has a fleet-wide quota to take a share of.
    var hasFleetQuotas: Bool { !fleetQuotas.isEmpty }

    /// Sets every fleet-wide quota's ceiling to `share` of it (this replica's
    /// part of the group's partitions); a share never takes a client below
    /// one request per second.
    func applyQuotaShare(_ share: Double) {
        let share = min(max(share, 0), 1)
        for (client, quota) in fleetQuotas {
            client.setRateCeiling(max(1, Double(quota) * share))
        }
    }

    /// Every client's cumulative counters, for metrics.
    func allStats() -> [(provider: Provider, app: String, host: String, stats: ProviderClientStats)] {
        apps.sorted { $0.key < $1.key }.flatMap { name, clients in
            var out: [(provider: Provider, app: String, host: String, stats: ProviderClientStats)] = []
            if let apns = clients.apns { out.append((.apns, name, apns.host, apns.stats())) }
            if let fcm = clients.fcm { out.append((.fcm, name, fcm.host, fcm.stats())) }
            for (host, stats) in clients.webpush?.stats() ?? [] { out.append((.webpush, name, host, stats)) }
            if let hms = clients.hms { out.append((.hms, name, hms.host, hms.stats())) }
            return out
        }
    }

    /// A provider default with the configured circuit breaker overrides and
    /// `worker.max_inline_attempts` tries for a request that gets no HTTP status.
    static func policy(_ base: ProviderClientPolicy, _ configuration: WorkerConfiguration) -> ProviderClientPolicy {
        var policy = base
        if let d = configuration.retry.circuitOpenDuration { policy.circuitBreaker.openDuration = d }
        if let n = configuration.retry.circuitMinimumRequests { policy.circuitBreaker.minimumRequests = n }
        policy.maxResendsWithoutStatus = max(0, configuration.worker.maxInlineAttempts - 1)
        return policy
    }

    /// `policy` with the provider section's `rate_limit_per_second`, when set.
    static func policy(_ base: ProviderClientPolicy, _ configuration: WorkerConfiguration, rate: Int?) -> ProviderClientPolicy {
        var policy = policy(base, configuration)
        if let rate { policy.rateLimit.limit(perSecond: rate) }
        return policy
    }

    /// The contents of the secret file the configuration names at `key`.
    static func secret(_ path: String, key: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key: key, problem: "cannot read \(path)")
        }
        return data
    }

    /// The secret file at `key` as one line of printable text (its ends
    /// trimmed): a file that is not UTF-8, holds nothing, or has a control
    /// character or more than one line inside can be no OAuth client secret,
    /// and would only be refused by the provider's token endpoint, delivery
    /// after delivery.
    static func secretText(_ path: String, key: String) throws -> String {
        let data = try secret(path, key: key)
        let text = String(decoding: data, as: UTF8.self)
        guard Array(text.utf8) == [UInt8](data) else { throw ConfigurationError(key: key, problem: "\(path) is not UTF-8 text") }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ConfigurationError(key: key, problem: "\(path) is empty") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ConfigurationError(key: key, problem: "\(path) holds more than one line, or a control character")
        }
        return trimmed
    }

    /// `body`, with a `ProviderError` (a key or setting the client refused:
    /// there, but unusable) reported as a bad configuration at `key`.
    static func naming<T>(_ key: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as ProviderError {
            throw ConfigurationError(key: key, problem: "\(error)")
        }
    }

    static func webPushClient(_ webpush: WorkerConfiguration.WebPush, app name: String, _ configuration: WorkerConfiguration,
                              http: HTTP2ClientPool, logger: Logger) throws -> WebPushClient {
        let pem = try secret(webpush.vapidPrivateKeyPath, key: "apps.\(name).webpush.vapid_private_key_path")
        return try naming("apps.\(name).webpush") {
            try WebPushClient(
                configuration: WebPushClientConfiguration(
                    vapidPrivateKeyPEM: String(decoding: pem, as: UTF8.self), subject: webpush.subject,
                    padding: webpush.padding, policy: policy(.webPushDefault, configuration, rate: webpush.rateLimitPerSecond),
                    allowedHosts: webpush.allowedHosts),
                http: try http.client(for: "webpush"), logger: logger)
        }
    }

    static func hmsClient(_ hms: WorkerConfiguration.HMS, app name: String, _ configuration: WorkerConfiguration,
                          http: HTTP2ClientPool, logger: Logger) throws -> HMSClient {
        let clientSecret = try secretText(hms.clientSecretPath, key: "apps.\(name).hms.client_secret_path")
        return try naming("apps.\(name).hms") {
            try HMSClient(
                configuration: HMSClientConfiguration(
                    appID: hms.appID, clientSecret: clientSecret,
                    baseURL: hms.baseURL, tokenURL: hms.tokenURL,
                    policy: policy(.hmsDefault, configuration, rate: hms.rateLimitPerSecond ?? hms.fleetRateLimitPerSecond), clientID: hms.clientID),
                http: try http.client(for: "hms"), logger: logger)
        }
    }

    func shutdown() { http.shutdown() }
}

extension ProviderRouter.AppClients {
    /// Sends through the client for `request.provider` (APNs: to the host of
    /// `environment`), unless `gate` closes before it goes; nil when the app
    /// has none. A request of a lane that yields waits behind the other
    /// lane's for a stream slot of its host (`HTTPRequestPriority`).
    func send(_ request: ProviderRequest, environment: APNsEnvironment? = nil, gate: SendGate? = nil,
              lane: Lane = .interactive) async throws -> ProviderResponse? {
        let priority: HTTPRequestPriority = lane.yieldsToOtherLanes ? .background : .urgent
        switch request.provider {
        case .apns: return try await apns?.send(request, environment: environment, gate: gate, priority: priority)
        case .fcm: return try await fcm?.send(request, gate: gate, priority: priority)
        case .webpush:
            guard let webpush else { return nil }
            return try await webpush.send(try webpush.seal(request), gate: gate, priority: priority)
        case .hms: return try await hms?.send(body: request.body, gate: gate, priority: priority)
        }
    }

    /// True when this app's APNs sandbox host differs from its production host,
    /// i.e. when a device's registered environment changes where it is sent.
    var routesSandboxSeparately: Bool {
        guard let apns else { return false }
        return apns.baseURL(for: .sandbox) != apns.baseURL(for: .production)
    }

    func serves(_ platform: Platform) -> Bool {
        switch platform.provider {
        case .apns: apns != nil
        case .fcm: fcm != nil
        case .webpush: webpush != nil
        case .hms: hms != nil
        }
    }
}

extension TokenBucketLimiter.Configuration {
    /// A per-app ceiling from the configuration: `rate` per second, one second of burst.
    mutating func limit(perSecond rate: Int) {
        ratePerSecond = Double(rate)
        burst = Double(rate)
    }
}
