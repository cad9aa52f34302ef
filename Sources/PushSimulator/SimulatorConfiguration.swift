import Foundation

/// Everything the simulator needs to know: where to listen, which TLS identity
/// to present, which APNs keys and FCM service accounts it trusts, which device
/// tokens are dead, and which faults to inject.
public struct SimulatorConfiguration: Sendable, Codable {
    /// Address to bind; default `127.0.0.1`.
    public var host: String
    /// Port to bind; `0` picks a free one (read it back from `PushSimulator.port`).
    public var port: Int
    /// The TLS identity the server presents.
    public var tls: SimulatorTLS
    /// APNs signing keys whose ES256 provider tokens are accepted.
    public var apnsKeys: [SimulatorAPNsKey]
    /// FCM service accounts whose RS256 JWT bearer grants are accepted.
    public var fcmAccounts: [SimulatorFCMAccount]
    /// Device token → the moment it became unregistered (APNs 410 timestamp, FCM 404 UNREGISTERED).
    public var deadTokens: [String: Date]
    /// Answer 200 to every APNs/FCM request without any check: a cheap sink for benchmarks.
    public var fastMode: Bool
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` advertised on every connection (Apple advertises up to 1,000).
    public var maxConcurrentStreams: Int
    /// Event-loop threads serving connections.
    public var eventLoopThreads: Int
    /// Faults to inject (answers, delays, GOAWAY, resets, SETTINGS changes); replaceable at runtime.
    public var scenarios: [SimulatorScenario]
    /// Which APNs host this simulator plays; nil accepts tokens of either environment.
    public var apnsEnvironment: SimulatorAPNsEnvironment?
    /// Device token → the environment it was issued for. A token sent to the other
    /// environment's host gets `400 BadDeviceToken`, as on the real service.
    public var tokenEnvironments: [String: SimulatorAPNsEnvironment]
    /// New provider tokens tolerated per key within 20 minutes after the first
    /// (several replicas each sign their own); beyond it `429 TooManyProviderTokenUpdates`.
    /// nil disables the rule.
    public var apnsTokenUpdateAllowance: Int?
    /// Keep `SimulatorStats.apnsSendsByID` (duplicate detection); off for long benchmarks.
    public var recordSendIDs: Bool
    /// The most distinct `apns-id`s `apnsSendsByID` keeps; later new ids are only counted.
    public var maxRecordedSendIDs: Int
    /// PEM of the CA that issues APNs client certificates (certificate-based auth).
    /// When set, the TLS server asks clients for a certificate (optional, so token
    /// auth keeps working); a certificate this CA did not issue, or an expired one,
    /// gets `403 BadCertificate`, one for the other environment `403 BadCertificateEnvironment`.
    public var apnsClientCertificateCAPEM: String?
    /// VAPID public keys (base64url, uncompressed P-256) whose signatures the Web Push
    /// endpoint accepts; empty accepts any valid key (403 `VAPIDKeyNotAllowed` otherwise).
    public var webPushVAPIDKeys: [String]
    /// Where the Web Push endpoint records the plaintexts it decrypted; nil records none.
    /// Not part of the JSON file (set it in code).
    public var webPushInbox: SimulatorWebPushInbox?
    /// Huawei Push Kit apps whose client credentials grants are accepted (empty: none).
    public var hmsApps: [SimulatorHMSApp]
    /// Log up to this many processed push requests in `SimulatorStats.requests`
    /// (when each arrived, its provider, target and answer); 0 logs none.
    /// Tests read it to see which sends started when. Not in fast mode.
    public var requestLog = 0

    /// A configuration with sensible local defaults; only the credentials usually need filling in.
    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        tls: SimulatorTLS = .generate,
        apnsKeys: [SimulatorAPNsKey] = [],
        fcmAccounts: [SimulatorFCMAccount] = [],
        deadTokens: [String: Date] = [:],
        fastMode: Bool = false,
        maxConcurrentStreams: Int = 1000,
        eventLoopThreads: Int = 1,
        scenarios: [SimulatorScenario] = [],
        apnsEnvironment: SimulatorAPNsEnvironment? = nil,
        tokenEnvironments: [String: SimulatorAPNsEnvironment] = [:],
        apnsTokenUpdateAllowance: Int? = 10,
        recordSendIDs: Bool = true,
        maxRecordedSendIDs: Int = 1_000_000,
        apnsClientCertificateCAPEM: String? = nil,
        webPushVAPIDKeys: [String] = [],
        webPushInbox: SimulatorWebPushInbox? = nil,
        hmsApps: [SimulatorHMSApp] = []
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.apnsKeys = apnsKeys
        self.fcmAccounts = fcmAccounts
        self.deadTokens = deadTokens
        self.fastMode = fastMode
        self.maxConcurrentStreams = maxConcurrentStreams
        self.eventLoopThreads = eventLoopThreads
        self.scenarios = scenarios
        self.apnsEnvironment = apnsEnvironment
        self.tokenEnvironments = tokenEnvironments
        self.apnsTokenUpdateAllowance = apnsTokenUpdateAllowance
        self.recordSendIDs = recordSendIDs
        self.maxRecordedSendIDs = maxRecordedSendIDs
        self.apnsClientCertificateCAPEM = apnsClientCertificateCAPEM
        self.webPushVAPIDKeys = webPushVAPIDKeys
        self.webPushInbox = webPushInbox
        self.hmsApps = hmsApps
    }

    private enum CodingKeys: String, CodingKey {
        case host, port, tls, apnsKeys, fcmAccounts, deadTokens, fastMode, maxConcurrentStreams
        case eventLoopThreads, scenarios, apnsEnvironment, tokenEnvironments, apnsTokenUpdateAllowance
        case recordSendIDs, maxRecordedSendIDs, apnsClientCertificateCAPEM, webPushVAPIDKeys, hmsApps, requestLog
    }

    /// Decodes with every key optional, falling back to the defaults of `init`; a key it does not know is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SimulatorConfiguration()
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? defaults.host
        port = try container.decodeIfPresent(Int.self, forKey: .port) ?? defaults.port
        if container.contains(.tls), try !container.decodeNil(forKey: .tls) {
            try SimulatorTLS.rejectUnknownKeys(from: container.superDecoder(forKey: .tls))
        }
        tls = try container.decodeIfPresent(SimulatorTLS.self, forKey: .tls) ?? defaults.tls
        apnsKeys = try container.decodeIfPresent([SimulatorAPNsKey].self, forKey: .apnsKeys) ?? []
        fcmAccounts = try container.decodeIfPresent([SimulatorFCMAccount].self, forKey: .fcmAccounts) ?? []
        deadTokens = try container.decodeIfPresent([String: Date].self, forKey: .deadTokens) ?? [:]
        fastMode = try container.decodeIfPresent(Bool.self, forKey: .fastMode) ?? defaults.fastMode
        maxConcurrentStreams =
            try container.decodeIfPresent(Int.self, forKey: .maxConcurrentStreams) ?? defaults.maxConcurrentStreams
        eventLoopThreads =
            try container.decodeIfPresent(Int.self, forKey: .eventLoopThreads) ?? defaults.eventLoopThreads
        scenarios = try container.decodeIfPresent([SimulatorScenario].self, forKey: .scenarios) ?? []
        apnsEnvironment = try container.decodeIfPresent(SimulatorAPNsEnvironment.self, forKey: .apnsEnvironment)
        tokenEnvironments =
            try container.decodeIfPresent([String: SimulatorAPNsEnvironment].self, forKey: .tokenEnvironments) ?? [:]
        apnsTokenUpdateAllowance =
            container.contains(.apnsTokenUpdateAllowance)
            ? try container.decodeIfPresent(Int.self, forKey: .apnsTokenUpdateAllowance)
            : defaults.apnsTokenUpdateAllowance
        recordSendIDs = try container.decodeIfPresent(Bool.self, forKey: .recordSendIDs) ?? defaults.recordSendIDs
        maxRecordedSendIDs =
            try container.decodeIfPresent(Int.self, forKey: .maxRecordedSendIDs) ?? defaults.maxRecordedSendIDs
        apnsClientCertificateCAPEM = try container.decodeIfPresent(String.self, forKey: .apnsClientCertificateCAPEM)
        webPushVAPIDKeys = try container.decodeIfPresent([String].self, forKey: .webPushVAPIDKeys) ?? []
        hmsApps = try container.decodeIfPresent([SimulatorHMSApp].self, forKey: .hmsApps) ?? []
        requestLog = try container.decodeIfPresent(Int.self, forKey: .requestLog) ?? defaults.requestLog
    }

    /// Reads a JSON configuration file. Dates (in `deadTokens`) are ISO 8601 strings.
    /// Every key is optional; a key the format does not have is refused. The error names the file and the failing key.
    public static func load(fromJSONFile path: String) throws -> SimulatorConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SimulatorError.invalidConfiguration(path, "cannot read the file: \(error)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let configuration = try decoder.decode(SimulatorConfiguration.self, from: data)
            try configuration.validate()
            return configuration
        } catch let error as DecodingError {
            throw SimulatorError.invalidConfiguration(path, Self.describe(error))
        }
    }

    /// Checks ranges that the types cannot express; the error names the key.
    public func validate() throws {
        guard (0...65535).contains(port) else { throw SimulatorError.invalidConfiguration("port", "must be 0...65535") }
        guard (1...100_000).contains(maxConcurrentStreams) else {
            throw SimulatorError.invalidConfiguration("maxConcurrentStreams", "must be 1...100000")
        }
        guard (1...64).contains(eventLoopThreads) else {
            throw SimulatorError.invalidConfiguration("eventLoopThreads", "must be 1...64")
        }
        if let allowance = apnsTokenUpdateAllowance, allowance < 0 {
            throw SimulatorError.invalidConfiguration("apnsTokenUpdateAllowance", "must be ≥ 0 (or null to disable)")
        }
        guard maxRecordedSendIDs >= 0 else {
            throw SimulatorError.invalidConfiguration("maxRecordedSendIDs", "must be ≥ 0")
        }
        for (index, app) in hmsApps.enumerated() {
            guard !app.appID.isEmpty, app.appID.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw SimulatorError.invalidConfiguration("hmsApps[\(index)].appId", "must be digits")
            }
            guard app.tokenLifetimeSeconds >= 1 else {
                throw SimulatorError.invalidConfiguration("hmsApps[\(index)].tokenLifetimeSeconds", "must be ≥ 1")
            }
        }
        try Self.validate(scenarios: scenarios)
    }

    /// Checks each scenario; the error names `scenarios[i].field`.
    static func validate(scenarios: [SimulatorScenario]) throws {
        for (index, scenario) in scenarios.enumerated() { try scenario.validate(key: "scenarios[\(index)]") }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.reduce(into: "") { path, key in
                if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error {
        case .dataCorrupted(let context) where context.debugDescription == unknownKeyDescription:
            return "unknown key \(path(context))"

        case .keyNotFound(let key, let context): return "missing key \(path(context)).\(key.stringValue)"
        case .typeMismatch(_, let context): return "wrong type at \(path(context)): \(context.debugDescription)"
        case .valueNotFound(_, let context): return "missing value at \(path(context))"
        case .dataCorrupted(let context): return "bad value at \(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// An APNs environment: `api.sandbox.push.apple.com` or `api.push.apple.com`.
public enum SimulatorAPNsEnvironment: String, Sendable, Codable, Equatable {
    /// `api.sandbox.push.apple.com` (development builds).
    case sandbox
    /// `api.push.apple.com` (App Store, TestFlight and ad-hoc builds).
    case production
}

/// The TLS identity of the simulator.
public enum SimulatorTLS: Sendable, Codable, Equatable {
    /// Make a fresh CA and a server certificate for localhost, 127.0.0.1 and ::1.
    case generate
    /// Use existing PEM files; `caCertificatePEMPath` is what clients must trust.
    case files(certificateChainPEMPath: String, privateKeyPEMPath: String, caCertificatePEMPath: String)

    /// Throws for a key of `tls`'s JSON object (or of its case's object) that the case does not declare.
    static func rejectUnknownKeys(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(cases: CodingKeys.self) { tlsCase -> any CodingKey.Type in
            switch tlsCase {
            case .generate: return GenerateCodingKeys.self
            case .files: return FilesCodingKeys.self
            }
        }
    }
}

/// An APNs signing key (the `.p8` Apple hands out) as the simulator knows it.
public struct SimulatorAPNsKey: Sendable, Codable, Equatable {
    /// The 10-character key ID, the JWT header's `kid`.
    public var keyID: String
    /// The team the key belongs to, the JWT's `iss`.
    public var teamID: String
    /// The P-256 public key, SPKI PEM.
    public var publicKeyPEM: String
    /// Bundle IDs this team may push to; empty accepts any.
    public var topics: [String]

    public init(keyID: String, teamID: String, publicKeyPEM: String, topics: [String] = []) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyPEM = publicKeyPEM
        self.topics = topics
    }

    private enum CodingKeys: String, CodingKey {
        case keyID, teamID, publicKeyPEM, topics
    }

    /// Decodes with `topics` optional (empty); a key it does not know is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keyID = try container.decode(String.self, forKey: .keyID)
        teamID = try container.decode(String.self, forKey: .teamID)
        publicKeyPEM = try container.decode(String.self, forKey: .publicKeyPEM)
        topics = try container.decodeIfPresent([String].self, forKey: .topics) ?? []
    }
}

/// An FCM service account as the simulator knows it (its public half).
public struct SimulatorFCMAccount: Sendable, Codable, Equatable {
    /// The account's `client_email`, the JWT's `iss`.
    public var clientEmail: String
    /// The account's `private_key_id`, the JWT header's `kid`.
    public var privateKeyID: String
    /// The Firebase project the account may send for.
    public var projectID: String
    /// The RSA public key, SPKI PEM.
    public var publicKeyPEM: String

    public init(clientEmail: String, privateKeyID: String, projectID: String, publicKeyPEM: String) {
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.projectID = projectID
        self.publicKeyPEM = publicKeyPEM
    }

    private enum CodingKeys: String, CodingKey {
        case clientEmail, privateKeyID, projectID, publicKeyPEM
    }

    /// Decodes every key as required; a key it does not know is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        clientEmail = try container.decode(String.self, forKey: .clientEmail)
        privateKeyID = try container.decode(String.self, forKey: .privateKeyID)
        projectID = try container.decode(String.self, forKey: .projectID)
        publicKeyPEM = try container.decode(String.self, forKey: .publicKeyPEM)
    }
}
