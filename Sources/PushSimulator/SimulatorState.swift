import PushCore
import Foundation

/// The simulator's mutable state, shared by every connection: dead tokens,
/// token environments, issued access tokens, verified provider tokens and stats.
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
        var tokenEnvironments: [String: SimulatorAPNsEnvironment] = [:]
        var accessTokens: [String: AccessGrant] = [:]
        /// Prune expired access tokens once the table reaches this size.
        var accessTokenPruneAt = 1024
        var verifiedProviderTokens: [String: VerifiedProviderToken] = [:]
        /// Key ID → when each recent new provider token was first seen (last 20 minutes).
        var providerTokenUpdates: [String: [Date]] = [:]
        var stats = SimulatorStats()
        var port = 0
        var messageCounter: UInt64 = 0
    }

    private let storage = Locked(Storage())
    /// Caps the verified-token cache; real senders reuse one token per key for up to an hour.
    private let maxVerifiedProviderTokens = 10_000
    /// Whether `apnsSendsByID` is kept, and its size limit.
    let recordSendIDs: Bool
    private let maxRecordedSendIDs: Int
    /// The most requests `stats.requests` keeps (0: the log is off).
    let requestLogLimit: Int

    init(
        deadTokens: [String: Date], tokenEnvironments: [String: SimulatorAPNsEnvironment] = [:],
        recordSendIDs: Bool = true, maxRecordedSendIDs: Int = 1_000_000, requestLogLimit: Int = 0
    ) {
        self.recordSendIDs = recordSendIDs
        self.maxRecordedSendIDs = maxRecordedSendIDs
        self.requestLogLimit = requestLogLimit
        storage.withLock { storage in
            for (token, date) in deadTokens { storage.deadTokens[Self.normalize(token)] = date }
            for (token, environment) in tokenEnvironments { storage.tokenEnvironments[Self.normalize(token)] = environment }
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

    func setEnvironment(_ environment: SimulatorAPNsEnvironment?, token: String) {
        storage.withLock { $0.tokenEnvironments[Self.normalize(token)] = environment }
    }

    func environment(token: String) -> SimulatorAPNsEnvironment? {
        let key = Self.normalize(token)
        return storage.withLock { $0.tokenEnvironments[key] }
    }

    /// Remembers an access token; expired ones are pruned whenever the table doubles.
    func issue(accessToken: String, grant: AccessGrant, now: Date) {
        storage.withLock {
            if $0.accessTokens.count >= $0.accessTokenPruneAt {
                $0.accessTokens = $0.accessTokens.filter { $0.value.expires > now }
                $0.accessTokenPruneAt = max(1024, $0.accessTokens.count * 2)
            }
            $0.accessTokens[accessToken] = grant
            $0.stats.tokensIssued += 1
        }
    }

    func grant(forAccessToken token: String) -> AccessGrant? {
        storage.withLock { $0.accessTokens[token] }
    }

    var accessTokenCount: Int {
        storage.withLock { $0.accessTokens.count }
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

    /// Counts a new provider token for `keyID`; false when more than `allowance`
    /// new tokens for that key were already seen in the last `window` seconds.
    func noteNewProviderToken(keyID: String, now: Date, allowance: Int, window: TimeInterval) -> Bool {
        storage.withLock {
            var recent = ($0.providerTokenUpdates[keyID] ?? []).filter { now.timeIntervalSince($0) < window }
            // The first token is not an update; `allowance` updates follow it.
            guard recent.count <= allowance else {
                $0.providerTokenUpdates[keyID] = recent
                return false
            }
            recent.append(now)
            $0.providerTokenUpdates[keyID] = recent
            return true
        }
    }

    /// A process-unique number for FCM message names.
    func nextMessageNumber() -> UInt64 {
        storage.withLock {
            $0.messageCounter += 1
            return $0.messageCounter
        }
    }

    /// Reserves `count` process-unique FCM message numbers; returns the first.
    func reserveMessageNumbers(_ count: UInt64) -> UInt64 {
        storage.withLock {
            let first = $0.messageCounter + 1
            $0.messageCounter += count
            return first
        }
    }

    /// Records a fast-mode connection's answered sends, as `record(_:apnsID:)` would one by one.
    func record(_ tally: SimulatorTally) {
        guard !tally.isEmpty else { return }
        storage.withLock {
            if tally.apnsAccepted > 0 {
                $0.stats.responses[Self.responseKey("apns", 200, "OK"), default: 0] += tally.apnsAccepted
                $0.stats.apnsAccepted += tally.apnsAccepted
            }
            if tally.fcmAccepted > 0 {
                $0.stats.responses[Self.responseKey("fcm", 200, "OK"), default: 0] += tally.fcmAccepted
                $0.stats.fcmAccepted += tally.fcmAccepted
            }
            $0.stats.apnsSendIDsNotRecorded += tally.unrecordedIDs
            for apnsID in tally.apnsIDs { countSendID(apnsID, in: &$0.stats) }
        }
    }

    /// Records one processed request (its answer may still be lost) in the stats.
    func record(_ response: SimulatorResponse, apnsID: String?, fcmValidateOnly: Bool = false) {
        let key = Self.responseKey(response.provider, response.status, response.reason)
        storage.withLock {
            $0.stats.responses[key, default: 0] += 1
            if let apnsID {
                if recordSendIDs {
                    countSendID(apnsID, in: &$0.stats)
                } else {
                    $0.stats.apnsSendIDsNotRecorded += 1
                }
            }
            if response.status == 200 {
                if response.provider == "apns" { $0.stats.apnsAccepted += 1 }
                if response.provider == "fcm", !fcmValidateOnly { $0.stats.fcmAccepted += 1 }
            }
        }
    }

    /// The `responses` key of an answer: `provider|status|reason`.
    static func responseKey(_ provider: String, _ status: Int, _ reason: String) -> String {
        "\(provider)|\(status)|\(reason)"
    }

    /// Counts one send of a valid `apns-id` (caller holds the lock): by id up
    /// to the recording cap, beyond it only in the not-recorded total.
    private func countSendID(_ apnsID: String, in stats: inout SimulatorStats) {
        if stats.apnsSendsByID.count < maxRecordedSendIDs || stats.apnsSendsByID[apnsID] != nil {
            stats.apnsSendsByID[apnsID, default: 0] += 1
        } else {
            stats.apnsSendIDsNotRecorded += 1
        }
    }

    /// Appends a processed push request to the request log (up to its limit).
    func log(_ record: SimulatorRequestRecord) {
        storage.withLock {
            if $0.stats.requests.count < requestLogLimit { $0.stats.requests.append(record) } else { $0.stats.requestsNotLogged += 1 }
        }
    }

    /// Records a processed request whose answer never reached the client.
    func recordUnanswered(provider: String, apnsID: String?) {
        storage.withLock {
            $0.stats.requestsUnanswered += 1
            if let apnsID, provider == "apns" {
                if recordSendIDs, $0.stats.apnsUnansweredIDs.count < maxRecordedSendIDs
                    || $0.stats.apnsUnansweredIDs[apnsID] != nil
                {
                    $0.stats.apnsUnansweredIDs[apnsID, default: 0] += 1
                }
            }
        }
    }

    func recordConnection() {
        storage.withLock { $0.stats.connectionsAccepted += 1 }
    }

    /// Adds to the transport-fault counters.
    func recordTransport(goaways: Int = 0, refusedByGoaway: Int = 0, resets: Int = 0, settings: Int = 0) {
        storage.withLock {
            $0.stats.goawaysSent += goaways
            $0.stats.streamsRefusedByGoaway += refusedByGoaway
            $0.stats.connectionsReset += resets
            $0.stats.settingsUpdatesSent += settings
        }
    }

    /// Clients opened `count` more streams (`SimulatorStreamCounter`).
    func recordStreamsOpened(_ count: Int) {
        storage.withLock { $0.stats.streamsOpened += count }
    }

    /// A connection now has `open` streams open, more than it ever had.
    func recordOpenStreams(_ open: Int) {
        storage.withLock { $0.stats.peakConcurrentStreams = max($0.stats.peakConcurrentStreams, open) }
    }

    /// A client opened more streams than the acknowledged MAX_CONCURRENT_STREAMS.
    func recordStreamLimitViolation() {
        storage.withLock { $0.stats.streamLimitViolations += 1 }
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
