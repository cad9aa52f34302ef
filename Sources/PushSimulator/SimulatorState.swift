import Foundation

/// The simulator's mutable state, shared by every connection: dead tokens,
/// issued access tokens, verified provider tokens, fault counters and stats.
final class SimulatorState: Sendable {
    /// An OAuth access token the token endpoint handed out.
    struct AccessGrant: Sendable {
        let projectID: String
        let clientEmail: String
        let expires: Date
    }

    /// An APNs provider token whose signature was already verified.
    struct VerifiedProviderToken: Sendable {
        let keyID: String
        let issuedAt: Int64
    }

    private struct Storage {
        var deadTokens: [String: Date] = [:]
        var accessTokens: [String: AccessGrant] = [:]
        var verifiedProviderTokens: [String: VerifiedProviderToken] = [:]
        var scenarioMatches: [Int] = []
        var stats = SimulatorStats()
        var port = 0
        var messageCounter: UInt64 = 0
    }

    private let storage = Locked(Storage())
    /// Caps the verified-token cache; real senders reuse one token per key for up to an hour.
    private let maxVerifiedProviderTokens = 10_000

    init(deadTokens: [String: Date], scenarioCount: Int) {
        storage.withLock { storage in
            for (token, date) in deadTokens { storage.deadTokens[Self.normalize(token)] = date }
            storage.scenarioMatches = Array(repeating: 0, count: scenarioCount)
        }
    }

    /// APNs tokens are hex and case-insensitive; FCM tokens are kept as they are.
    static func normalize(_ token: String) -> String {
        token.utf8.allSatisfy(\.isHexDigit) ? token.lowercased() : token
    }

    var port: Int {
        get { storage.withLock { $0.port } }
        set { storage.withLock { $0.port = newValue } }
    }

    func markDead(token: String, since: Date) {
        storage.withLock { $0.deadTokens[Self.normalize(token)] = since }
    }

    func deadSince(token: String) -> Date? {
        let key = Self.normalize(token)
        return storage.withLock { $0.deadTokens[key] }
    }

    func issue(accessToken: String, grant: AccessGrant) {
        storage.withLock {
            $0.accessTokens[accessToken] = grant
            $0.stats.tokensIssued += 1
        }
    }

    func grant(forAccessToken token: String) -> AccessGrant? {
        storage.withLock { $0.accessTokens[token] }
    }

    func verifiedProviderToken(_ token: String) -> VerifiedProviderToken? {
        storage.withLock { $0.verifiedProviderTokens[token] }
    }

    func rememberVerified(providerToken: String, _ verified: VerifiedProviderToken) {
        storage.withLock {
            if $0.verifiedProviderTokens.count >= maxVerifiedProviderTokens { $0.verifiedProviderTokens.removeAll() }
            $0.verifiedProviderTokens[providerToken] = verified
        }
    }

    /// Counts a request matching scenario `index`; returns how many matched before it.
    func countScenarioMatch(_ index: Int) -> Int {
        storage.withLock {
            let before = $0.scenarioMatches[index]
            $0.scenarioMatches[index] = before + 1
            return before
        }
    }

    /// A process-unique number for FCM message names.
    func nextMessageNumber() -> UInt64 {
        storage.withLock {
            $0.messageCounter += 1
            return $0.messageCounter
        }
    }

    /// Records one answer in the stats.
    func record(_ response: SimulatorResponse, apnsID: String?, fcmValidateOnly: Bool = false) {
        let key = "\(response.provider)|\(response.status)|\(response.reason)"
        storage.withLock {
            $0.stats.responses[key, default: 0] += 1
            if let apnsID { $0.stats.apnsSendsByID[apnsID, default: 0] += 1 }
            if response.status == 200 {
                if response.provider == "apns" { $0.stats.apnsAccepted += 1 }
                if response.provider == "fcm", !fcmValidateOnly { $0.stats.fcmAccepted += 1 }
            }
        }
    }

    func recordConnection() {
        storage.withLock { $0.stats.connectionsAccepted += 1 }
    }

    func stats() -> SimulatorStats {
        storage.withLock { $0.stats }
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
