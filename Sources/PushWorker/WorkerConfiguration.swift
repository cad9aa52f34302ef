import Foundation
import PushCore
import PushProviders

/// Everything a worker needs, from one JSON file plus `PUSHFLEET_*`
/// environment overrides. Validated at start; errors name the key.
public struct WorkerConfiguration: Sendable {
    public var kafka = Kafka()
    public var database = Database()
    public var worker = Worker()
    public var tls = TLS()
    public var retry = Retry()
    /// What intake accepts beyond the schema (`intake.*`).
    public var intake = Intake()
    /// How direct device tokens are checked against the registry (`registry.*`).
    public var registry = Registry()
    /// Metrics/health listener and log format.
    public var observability = ObservabilityConfiguration()
    /// Apps by key (the `app` field of notifications).
    public var apps: [String: App] = [:]

    public init() {}

    /// The topics this configuration names: its prefix and retry tiers.
    public var topics: TopicNames { TopicNames(prefix: kafka.topicPrefix, tiers: retry.tiers) }

    public struct Kafka: Sendable {
        public var bootstrapServers = "localhost:9092"
        public var groupID = "pushfleet"
        public var topicPrefix = TopicNames.defaultPrefix
        /// Extra librdkafka properties passed through unchanged.
        public var properties: [String: String] = [:]
        /// The bulk lane's consumer group (`kafka.bulk_group_id`; nil: `<group_id>.bulk`).
        public var bulkGroupID: String?

        /// The consumer group of `lane`'s consumer: each lane has its own, so
        /// its lag, its assignment and its scaling are its own.
        public func groupID(for lane: Lane) -> String {
            switch lane {
            case .interactive: groupID
            case .bulk: bulkGroupID ?? groupID + ".bulk"
            }
        }
    }

    public struct Database: Sendable {
        public var url = "postgresql://localhost/pushfleet"
        public var poolSize = 4
    }

    public struct Worker: Sendable {
        /// Shown in logs and `delivery_attempts.worker`.
        public var id = ProcessInfo.processInfo.hostName + "-\(ProcessInfo.processInfo.processIdentifier)"
        /// Messages taken from one poll and written in one Postgres transaction.
        /// 512: PostgreSQL's CPU per notification is ~11 % lower than at 256 for
        /// the same in-flight bound (docs/benchmarks.md, "What keeps each path cheap").
        public var batchSize = 512
        /// Full batches in flight at once (sends of all of them overlap): with
        /// `batchSize`, what `maxInFlight` defaults to (512 × 2 = 1,024).
        public var maxBatchesInFlight = 2
        /// Once a poll has its first message, how long it waits for more before
        /// the batch starts (never past `batchSize`, so a busy worker waits
        /// nothing). Below full load this trades a few milliseconds of latency
        /// for fuller batches: one ledger query and one outcome write per batch.
        public var pollLinger: Duration = .milliseconds(5)
        /// Messages taken and not yet finished, per worker: at the bound every
        /// assigned partition is paused (the poll loop keeps polling). Default
        /// `batchSize × maxBatchesInFlight`; it is also what a killed worker
        /// can have sent without recording (the duplicate bound).
        public var maxInFlight: Int?
        /// Messages in flight per partition: at the bound that partition is paused.
        public var maxInFlightPerPartition = 512
        /// Deliveries (a message × a device, topic or user row) being resolved,
        /// sent or written at once, over all batches (`DeliveryPermits`): what
        /// a worker's memory grows with, about 2.4 KB each. A batch over half
        /// of it is handled in parts. One message larger than the whole bound
        /// (up to 11,000 deliveries) still goes, alone.
        public var maxDeliveriesInFlight = 20_000
        /// Bytes (keys, values, headers) of the messages batches hold, decoded
        /// or waiting for permits, and of retries held until due: at the bound
        /// the worker takes no more until a batch finishes. One poll may pass
        /// it by one message.
        public var maxInFlightBytes = 32 << 20
        /// The share of `maxDeliveriesInFlight` the bulk lane may always hold
        /// when it has work (`worker.bulk_floor_fraction`): a campaign never
        /// starves, however busy the interactive lane is.
        public var bulkFloorFraction = 0.25
        /// The share of `maxDeliveriesInFlight` the bulk lane leaves free for
        /// interactive work beyond its floor (`worker.interactive_reserve_fraction`):
        /// a one-time code never waits for a campaign's permits.
        public var interactiveReserveFraction = 0.25
        /// `bulkFloorFraction` of the delivery bound, in deliveries.
        public var bulkFloor: Int { max(1, Int(exactly: (Double(maxDeliveriesInFlight) * bulkFloorFraction).rounded(.down)) ?? 1) }
        /// `interactiveReserveFraction` of the delivery bound, in deliveries.
        public var interactiveReserve: Int {
            max(0, Int(exactly: (Double(maxDeliveriesInFlight) * interactiveReserveFraction).rounded(.down)) ?? 0)
        }
        /// The effective in-flight bound, per lane.
        public var inFlightLimit: Int { maxInFlight ?? batchSize * maxBatchesInFlight }
        /// Tries of one request that gets no HTTP status (GOAWAY, reset, refused
        /// stream), all made at once by the provider client on a healthy
        /// connection; after the last, the delivery goes to a retry tier.
        public var maxInlineAttempts = 6
        /// At the in-flight bound the poll loop waits up to this long for a batch
        /// to finish before it pauses the assigned partitions (a pause drops
        /// librdkafka's prefetched messages; waiting keeps them). Also the
        /// longest a rebalance waits for the next poll while at the bound.
        public var boundPatience: Duration = .milliseconds(500)
        /// How long SIGTERM waits for in-flight work.
        public var drainTimeout: Duration = .seconds(20)
        /// How long a revoked partition's in-flight work is awaited before it goes
        /// (well under `max.poll.interval.ms`).
        public var revokeDrainTimeout: Duration = .seconds(10)
    }

    /// Delayed retries: attempts and the fixed-delay tiers (one topic each).
    public struct Retry: Sendable {
        public var maxAttempts = 5
        public var baseDelay: Duration = .seconds(5)
        public var tiers = RetryTier.defaults
        /// Provider circuit breaker overrides (`retry.circuit_breaker`): when an
        /// open circuit lets held-back requests try again. nil: the providers' defaults.
        public var circuitOpenDuration: Duration?
        public var circuitMinimumRequests: Int?
        /// How long a delivery may stay parked for a provider that cannot take
        /// it (`retry.max_parked_seconds`) before it is dead-lettered.
        public var maxHold: Duration = RetryPolicy().maxHold
        /// How long a delivery may stay parked for a credential that cannot be
        /// had (`retry.max_credential_wait_seconds`) before it is dead-lettered.
        public var maxCredentialHold: Duration = RetryPolicy().maxCredentialHold
        public var policy: RetryPolicy {
            var policy = RetryPolicy(maxAttempts: maxAttempts, baseDelay: baseDelay, tiers: tiers)
            policy.maxHold = maxHold
            policy.maxCredentialHold = maxCredentialHold
            return policy
        }
    }

    public struct TLS: Sendable {
        /// Extra CA bundle to trust for provider hosts (nil: the system store).
        public var caBundlePath: String?
        public var maxConnectionsPerHost = 2
        /// Outbound HTTP CONNECT proxy for provider traffic (`http://proxy:3128`).
        public var proxy: String?
    }

    /// One app's providers and credentials.
    public struct App: Sendable {
        public var apns: APNs?
        public var fcm: FCM?
        /// Web Push (browsers): the VAPID key and subject.
        public var webpush: WebPush?
        /// Huawei Push Kit: the app id and secret.
        public var hms: HMS?
        /// `skip_known_invalid_tokens` (default true): a token the registry has
        /// as invalid is recorded `invalid_token KnownInvalidToken` without a
        /// request; false sends anyway (an app that wants to probe dead tokens).
        public var skipKnownInvalidTokens = true
    }

    public struct APNs: Sendable {
        /// Bundle id: the `apns-topic`.
        public var topic: String
        public var teamID: String
        public var keyID: String
        /// Path to the `.p8` signing key (token auth; empty with certificate auth).
        public var keyPath: String
        public var baseURL = "https://api.push.apple.com"
        /// Host for devices registered in the sandbox environment (nil: `baseURL`).
        public var sandboxBaseURL: String?
        /// TLS client-certificate auth instead of a `.p8` key.
        public var certificate: Certificate?
        /// This app's APNs send rate ceiling (nil: none; a 429 still slows it down).
        public var rateLimitPerSecond: Int?
        /// A rate ceiling for the whole fleet, of which each replica takes its share.
        public var fleetRateLimitPerSecond: Int?
    }

    /// An APNs client certificate: PEM (certificate + key, or both in one
    /// file) or PKCS#12 with a passphrase read from a file.
    public struct Certificate: Sendable {
        public var path: String
        public var keyPath: String?
        /// `pem` or `p12`.
        public var format = "pem"
        public var passphrasePath: String?
    }

    public struct FCM: Sendable {
        /// Path to the service-account JSON.
        public var serviceAccountPath: String
        public var baseURL = "https://fcm.googleapis.com"
        /// Override of the service account's `token_uri` (tests, proxies).
        public var tokenURI: String?
        /// This project's FCM send rate ceiling (nil: FCM's default 600,000/min = 10,000/s).
        public var rateLimitPerSecond: Int?
        /// A rate ceiling for the whole fleet, of which each replica takes its share.
        public var fleetRateLimitPerSecond: Int?
    }

    /// `apps.<app>.webpush`: how the app's browser pushes are signed.
    public struct WebPush: Sendable {
        /// Path to the VAPID private key (PEM, P-256); its public half is the
        /// page's `applicationServerKey`.
        public var vapidPrivateKeyPath: String
        /// `mailto:…` or `https://…`: the contact push services see.
        public var subject: String
        /// Zero bytes of padding inside each encrypted record (default 0).
        public var padding = 0
        /// A send rate ceiling per push service (nil: none; a 429 still slows it down).
        public var rateLimitPerSecond: Int?
        /// `allowed_hosts`: the push services endpoints may name (a host or a
        /// parent domain each; default: the browsers' known push services).
        public var allowedHosts = WebPushClientConfiguration.knownPushServiceHosts
    }

    /// `apps.<app>.hms`: the app's Huawei Push Kit credentials.
    public struct HMS: Sendable {
        /// The AppGallery Connect app id (OAuth client id): 1-64 digits.
        public var appID: String
        /// Path to a file holding the app secret (OAuth client secret).
        public var clientSecretPath: String
        /// `client_id`: the OAuth 2.0 client id when it differs from the app id (nil: the app id).
        public var clientID: String?
        public var baseURL = "https://push-api.cloud.huawei.com"
        public var tokenURL = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
        /// This app's Push Kit send rate ceiling (nil: none; its 503 flow control still slows the client down).
        public var rateLimitPerSecond: Int?
        /// A rate ceiling for the whole fleet, of which each replica takes its share.
        public var fleetRateLimitPerSecond: Int?
    }
}

/// A configuration problem, naming the key.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var key: String
    public var problem: String
    public var description: String { "configuration error at \(key): \(problem)" }
}

extension WorkerConfiguration {
    /// Loads a JSON configuration file, then applies environment overrides:
    /// `PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS`, `PUSHFLEET_KAFKA_GROUP_ID`,
    /// `PUSHFLEET_KAFKA_TOPIC_PREFIX`, `PUSHFLEET_DATABASE_URL`, `PUSHFLEET_WORKER_ID`,
    /// `PUSHFLEET_CA_BUNDLE`, `PUSHFLEET_HTTPS_PROXY`, and the observability ones
    /// (`PUSHFLEET_OBSERVABILITY_LISTEN`, `PUSHFLEET_LOG_FORMAT`, `PUSHFLEET_LOG_LEVEL`).
    public static func load(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> WorkerConfiguration {
        var config = WorkerConfiguration()
        var root: JSONValue?
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(key: "--config", problem: "cannot read \(path)")
            }
            let json: JSONValue
            do { json = try JSONValue.parse(Array(data)) } catch {
                throw ConfigurationError(key: "--config", problem: "\(path) is not valid JSON: \(error.message)")
            }
            try config.apply(json)
            root = json
        }
        config.observability = try ObservabilityConfiguration.parse(root, environment: environment)
        config.applyEnvironment(environment)
        try config.validate()
        return config
    }

    mutating func apply(_ json: JSONValue) throws {
        let r = ConfigReader(json: json, path: "")
        if let k = r.object("kafka") {
            let kr = ConfigReader(json: k, path: "kafka.")
            kafka.bootstrapServers = try kr.string("bootstrap_servers") ?? kafka.bootstrapServers
            kafka.groupID = try kr.string("group_id") ?? kafka.groupID
            kafka.topicPrefix = try kr.string("topic_prefix") ?? kafka.topicPrefix
            kafka.bulkGroupID = try kr.string("bulk_group_id")
            if let props = kr.object("properties"), case .object(let members) = props {
                for (key, value) in members {
                    guard let s = value.stringValue else {
                        throw ConfigurationError(key: "kafka.properties.\(key)", problem: "must be a string")
                    }
                    kafka.properties[key] = s
                }
            }
        }
        if let d = r.object("database") {
            let dr = ConfigReader(json: d, path: "database.")
            database.url = try dr.string("url") ?? database.url
            database.poolSize = try dr.int("pool_size") ?? database.poolSize
        }
        if let w = r.object("worker") {
            let wr = ConfigReader(json: w, path: "worker.")
            worker.id = try wr.string("id") ?? worker.id
            worker.batchSize = try wr.int("batch_size") ?? worker.batchSize
            worker.maxBatchesInFlight = try wr.int("max_batches_in_flight") ?? worker.maxBatchesInFlight
            worker.maxInlineAttempts = try wr.int("max_inline_attempts") ?? worker.maxInlineAttempts
            worker.maxInFlight = try wr.int("max_in_flight") ?? worker.maxInFlight
            worker.maxInFlightPerPartition = try wr.int("max_in_flight_per_partition") ?? worker.maxInFlightPerPartition
            worker.maxDeliveriesInFlight = try wr.int("max_deliveries_in_flight") ?? worker.maxDeliveriesInFlight
            worker.maxInFlightBytes = try wr.int("max_in_flight_bytes") ?? worker.maxInFlightBytes
            if let s = try wr.int("drain_timeout_seconds") { worker.drainTimeout = .seconds(s) }
            if let s = try wr.int("revoke_drain_timeout_seconds") { worker.revokeDrainTimeout = .seconds(s) }
            if let ms = try wr.int("poll_linger_ms") {
                guard (0...1_000).contains(ms) else { throw ConfigurationError(key: "worker.poll_linger_ms", problem: "must be 0...1000") }
                worker.pollLinger = .milliseconds(ms)
            }
            worker.bulkFloorFraction = try wr.fraction("bulk_floor_fraction") ?? worker.bulkFloorFraction
            worker.interactiveReserveFraction = try wr.fraction("interactive_reserve_fraction") ?? worker.interactiveReserveFraction
            if let ms = try wr.int("bound_patience_ms") {
                guard (0...60_000).contains(ms) else { throw ConfigurationError(key: "worker.bound_patience_ms", problem: "must be 0...60000") }
                worker.boundPatience = .milliseconds(ms)
            }
        }
        if let i = r.object("intake") { try intake.read(ConfigReader(json: i, path: "intake.")) }
        if let g = r.object("registry") { try registry.read(ConfigReader(json: g, path: "registry.")) }
        if let rt = r.object("retry") {
            let rr = ConfigReader(json: rt, path: "retry.")
            retry.maxAttempts = try rr.int("max_attempts") ?? retry.maxAttempts
            if let s = try rr.int("base_delay_ms") { retry.baseDelay = .milliseconds(s) }
            if let s = try rr.positiveInt("max_parked_seconds") { retry.maxHold = .seconds(s) }
            if let s = try rr.positiveInt("max_credential_wait_seconds") { retry.maxCredentialHold = .seconds(s) }
            if let cb = rr.object("circuit_breaker") {
                let cr = ConfigReader(json: cb, path: "retry.circuit_breaker.")
                if let ms = try cr.int("open_ms") {
                    guard ms > 0 else { throw ConfigurationError(key: "retry.circuit_breaker.open_ms", problem: "must be positive") }
                    retry.circuitOpenDuration = .milliseconds(ms)
                }
                if let n = try cr.int("minimum_requests") {
                    guard n > 0 else { throw ConfigurationError(key: "retry.circuit_breaker.minimum_requests", problem: "must be positive") }
                    retry.circuitMinimumRequests = n
                }
            }
            if case .array(let items)? = rt["tiers"] {
                var tiers: [RetryTier] = []
                for (i, item) in items.enumerated() {
                    let tr = ConfigReader(json: item, path: "retry.tiers[\(i)].")
                    guard let ms = try tr.int("delay_ms"), ms > 0 else {
                        throw ConfigurationError(key: "retry.tiers[\(i)].delay_ms", problem: "must be a positive integer")
                    }
                    tiers.append(RetryTier(name: try tr.required("name"), delay: .milliseconds(ms)))
                }
                retry.tiers = tiers.sorted { $0.delay < $1.delay }
            }
        }
        if let t = r.object("tls") {
            let tr = ConfigReader(json: t, path: "tls.")
            tls.caBundlePath = try tr.string("ca_bundle")
            tls.maxConnectionsPerHost = try tr.int("max_connections_per_host") ?? tls.maxConnectionsPerHost
            tls.proxy = try tr.string("proxy")
        }
        if let a = r.object("apps"), case .object(let members) = a {
            for (name, appJSON) in members {
                let app = try App.parse(appJSON, path: "apps.\(name).")
                apps[name] = app
                if !app.skipKnownInvalidTokens { registry.probingApps.insert(name) }
            }
        }
    }

    mutating func applyEnvironment(_ env: [String: String]) {
        if let v = env["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] { kafka.bootstrapServers = v }
        if let v = env["PUSHFLEET_KAFKA_GROUP_ID"] { kafka.groupID = v }
        if let v = env["PUSHFLEET_KAFKA_TOPIC_PREFIX"] { kafka.topicPrefix = v }
        if let v = env["PUSHFLEET_DATABASE_URL"] { database.url = v }
        if let v = env["PUSHFLEET_WORKER_ID"] { worker.id = v }
        if let v = env["PUSHFLEET_CA_BUNDLE"] { tls.caBundlePath = v }
        if let v = env["PUSHFLEET_HTTPS_PROXY"] { tls.proxy = v.isEmpty ? nil : v }
    }

    func validate() throws {
        if kafka.bootstrapServers.isEmpty { throw ConfigurationError(key: "kafka.bootstrap_servers", problem: "must not be empty") }
        if !(1...10_000).contains(worker.batchSize) { throw ConfigurationError(key: "worker.batch_size", problem: "must be 1...10000") }
        if !(1...64).contains(worker.maxBatchesInFlight) { throw ConfigurationError(key: "worker.max_batches_in_flight", problem: "must be 1...64") }
        if let n = worker.maxInFlight, !(1...1_000_000).contains(n) {
            throw ConfigurationError(key: "worker.max_in_flight", problem: "must be 1...1000000")
        }
        if !(1...1_000_000).contains(worker.maxInFlightPerPartition) {
            throw ConfigurationError(key: "worker.max_in_flight_per_partition", problem: "must be 1...1000000")
        }
        if !(1...10_000_000).contains(worker.maxDeliveriesInFlight) {
            throw ConfigurationError(key: "worker.max_deliveries_in_flight", problem: "must be 1...10000000")
        }
        if !((1 << 20)...(1 << 40)).contains(worker.maxInFlightBytes) {
            throw ConfigurationError(key: "worker.max_in_flight_bytes", problem: "must be 1 MiB (1048576) ... 1 TiB")
        }
        if worker.bulkFloorFraction <= 0 || worker.bulkFloorFraction + worker.interactiveReserveFraction > 1 {
            throw ConfigurationError(key: "worker.bulk_floor_fraction",
                                     problem: "must be above 0, and with worker.interactive_reserve_fraction at most 1")
        }
        if !(1...10).contains(worker.maxInlineAttempts) { throw ConfigurationError(key: "worker.max_inline_attempts", problem: "must be 1...10") }
        if !(1...100).contains(database.poolSize) { throw ConfigurationError(key: "database.pool_size", problem: "must be 1...100") }
        if !(1...100).contains(retry.maxAttempts) { throw ConfigurationError(key: "retry.max_attempts", problem: "must be 1...100") }
        if retry.tiers.isEmpty { throw ConfigurationError(key: "retry.tiers", problem: "needs at least one tier") }
        if Set(retry.tiers.map(\.name)).count != retry.tiers.count { throw ConfigurationError(key: "retry.tiers", problem: "tier names must be unique") }
        if apps.isEmpty { throw ConfigurationError(key: "apps", problem: "no app configured") }
        for (name, app) in apps where app.apns == nil && app.fcm == nil && app.webpush == nil && app.hms == nil {
            throw ConfigurationError(key: "apps.\(name)", problem: "needs an apns, fcm, webpush or hms section")
        }
    }
}

extension WorkerConfiguration.App {
    static func parse(_ json: JSONValue, path: String) throws -> Self {
        let r = ConfigReader(json: json, path: path)
        var app = Self()
        if let a = r.object("apns") {
            let ar = ConfigReader(json: a, path: path + "apns.")
            var apns: WorkerConfiguration.APNs
            if let c = ar.object("certificate") {
                let cr = ConfigReader(json: c, path: path + "apns.certificate.")
                var certificate = WorkerConfiguration.Certificate(path: try cr.required("path"))
                certificate.keyPath = try cr.string("key_path")
                certificate.format = try cr.string("format") ?? "pem"
                guard ["pem", "p12"].contains(certificate.format) else {
                    throw ConfigurationError(key: path + "apns.certificate.format", problem: "must be \"pem\" or \"p12\"")
                }
                certificate.passphrasePath = try cr.string("passphrase_path")
                apns = WorkerConfiguration.APNs(
                    topic: try ar.required("topic"), teamID: try ar.string("team_id") ?? "",
                    keyID: "", keyPath: "")
                apns.certificate = certificate
            } else {
                apns = WorkerConfiguration.APNs(
                    topic: try ar.required("topic"), teamID: try ar.required("team_id"),
                    keyID: try ar.required("key_id"), keyPath: try ar.required("key_path"))
            }
            apns.baseURL = try ar.string("base_url") ?? apns.baseURL
            apns.sandboxBaseURL = try ar.string("sandbox_base_url")
            apns.rateLimitPerSecond = try ar.positiveInt("rate_limit_per_second")
            apns.fleetRateLimitPerSecond = try ar.fleetRateLimit(besides: apns.rateLimitPerSecond)
            app.apns = apns
        }
        if let f = r.object("fcm") {
            let fr = ConfigReader(json: f, path: path + "fcm.")
            var fcm = WorkerConfiguration.FCM(serviceAccountPath: try fr.required("service_account_path"))
            fcm.baseURL = try fr.string("base_url") ?? fcm.baseURL
            fcm.tokenURI = try fr.string("token_uri")
            fcm.rateLimitPerSecond = try fr.positiveInt("rate_limit_per_second")
            fcm.fleetRateLimitPerSecond = try fr.fleetRateLimit(besides: fcm.rateLimitPerSecond)
            app.fcm = fcm
        }
        if let w = r.object("webpush") {
            let wr = ConfigReader(json: w, path: path + "webpush.")
            var webpush = WorkerConfiguration.WebPush(
                vapidPrivateKeyPath: try wr.required("vapid_private_key_path"), subject: try wr.required("subject"))
            webpush.padding = try wr.int("padding") ?? 0
            guard (0...WebPushTranslator.maxPlaintextBytes).contains(webpush.padding) else {
                throw ConfigurationError(key: path + "webpush.padding", problem: "must be 0...\(WebPushTranslator.maxPlaintextBytes)")
            }
            webpush.rateLimitPerSecond = try wr.positiveInt("rate_limit_per_second")
            if let hosts = try wr.stringArray("allowed_hosts") {
                guard !hosts.isEmpty, hosts.allSatisfy({ !$0.isEmpty && !$0.contains(where: { $0 == "/" || $0 == ":" || $0.isWhitespace }) }) else {
                    throw ConfigurationError(key: path + "webpush.allowed_hosts", problem: "must be a non-empty list of host names (no scheme, path or spaces)")
                }
                webpush.allowedHosts = hosts.map { $0.lowercased() }
            }
            app.webpush = webpush
        }
        if let h = r.object("hms") {
            let hr = ConfigReader(json: h, path: path + "hms.")
            var hms = WorkerConfiguration.HMS(appID: try hr.required("app_id"), clientSecretPath: try hr.required("client_secret_path"))
            guard HMSTranslator.isValidAppID(hms.appID) else {
                throw ConfigurationError(key: path + "hms.app_id", problem: "must be 1-64 digits")
            }
            hms.baseURL = try hr.string("base_url") ?? hms.baseURL
            hms.tokenURL = try hr.string("token_url") ?? hms.tokenURL
            if let clientID = try hr.string("client_id") {
                guard !clientID.isEmpty, clientID.utf8.count <= 128, clientID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw ConfigurationError(key: path + "hms.client_id", problem: "must be 1-128 printable characters without spaces")
                }
                hms.clientID = clientID
            }
            hms.rateLimitPerSecond = try hr.positiveInt("rate_limit_per_second")
            hms.fleetRateLimitPerSecond = try hr.fleetRateLimit(besides: hms.rateLimitPerSecond)
            app.hms = hms
        }
        app.skipKnownInvalidTokens = try r.bool("skip_known_invalid_tokens") ?? true
        return app
    }
}

/// Typed access to configuration JSON with errors that name the key.
struct ConfigReader {
    let json: JSONValue
    let path: String

    func object(_ key: String) -> JSONValue? {
        guard let v = json[key], case .object = v else { return nil }
        return v
    }

    func string(_ key: String) throws -> String? {
        guard let v = json[key], v != .null else { return nil }
        guard let s = v.stringValue else { throw ConfigurationError(key: path + key, problem: "must be a string") }
        return s
    }

    func bool(_ key: String) throws -> Bool? {
        guard let v = json[key], v != .null else { return nil }
        guard case .bool(let b) = v else { throw ConfigurationError(key: path + key, problem: "must be true or false") }
        return b
    }

    func positiveInt(_ key: String) throws -> Int? {
        guard let n = try int(key) else { return nil }
        guard n > 0 else { throw ConfigurationError(key: path + key, problem: "must be a positive integer") }
        return n
    }

    /// A number in 0...1 (an integer 0 or 1, or a decimal).
    func fraction(_ key: String) throws -> Double? {
        guard let v = json[key], v != .null else { return nil }
        let value: Double
        switch v {
        case .int(let i): value = Double(i)
        case .double(let d): value = d
        default: throw ConfigurationError(key: path + key, problem: "must be a number from 0 to 1")
        }
        guard (0...1).contains(value) else { throw ConfigurationError(key: path + key, problem: "must be a number from 0 to 1") }
        return value
    }

    /// `fleet_rate_limit_per_second`: a quota for the whole fleet, of which
    /// each replica takes its share; set it or `rate_limit_per_second` (a
    /// replica's own ceiling), not both.
    func fleetRateLimit(besides perReplica: Int?) throws -> Int? {
        guard let fleet = try positiveInt("fleet_rate_limit_per_second") else { return nil }
        guard perReplica == nil else {
            throw ConfigurationError(key: path + "fleet_rate_limit_per_second",
                                     problem: "set either rate_limit_per_second (per replica) or fleet_rate_limit_per_second (for the fleet), not both")
        }
        return fleet
    }

    func stringArray(_ key: String) throws -> [String]? {
        guard let v = json[key], v != .null else { return nil }
        guard case .array(let items) = v else { throw ConfigurationError(key: path + key, problem: "must be an array of strings") }
        return try items.map { item in
            guard let s = item.stringValue else { throw ConfigurationError(key: path + key, problem: "must be an array of strings") }
            return s
        }
    }

    func required(_ key: String) throws -> String {
        guard let s = try string(key), !s.isEmpty else { throw ConfigurationError(key: path + key, problem: "is required") }
        return s
    }

    func int(_ key: String) throws -> Int? {
        guard let v = json[key], v != .null else { return nil }
        guard case .int(let i) = v, let n = Int(exactly: i) else { throw ConfigurationError(key: path + key, problem: "must be an integer") }
        return n
    }
}
