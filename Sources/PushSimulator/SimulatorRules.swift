import Crypto
import Foundation
import _CryptoExtras

/// The providers' documented rules as a function from request to response.
///
/// `respond(to:now:)` holds every check APNs, FCM and Google's OAuth token
/// endpoint make; the NIO server only moves bytes. Time is passed in, so tests
/// can put a request at any moment. The only state is `SimulatorState` (dead
/// tokens, issued access tokens, stats), shared safely between connections.
public final class SimulatorRules: Sendable {
    struct APNsKey: Sendable {
        let teamID: String
        let publicKey: P256.Signing.PublicKey
        let topics: Set<String>
    }

    struct FCMAccount: Sendable {
        let clientEmail: String
        let projectID: String
        let publicKey: _RSA.Signing.PublicKey
    }

    let state: SimulatorState
    let fastMode: Bool
    let scenarios: [SimulatorScenario]
    /// By key ID (`kid`).
    let apnsKeys: [String: APNsKey]
    /// By private key ID (`kid`).
    let fcmAccounts: [String: FCMAccount]

    /// Builds the rules for a configuration; throws if a key PEM does not parse.
    public init(configuration: SimulatorConfiguration) throws {
        var apnsKeys: [String: APNsKey] = [:]
        for (index, key) in configuration.apnsKeys.enumerated() {
            do {
                let publicKey = try P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM)
                apnsKeys[key.keyID] = APNsKey(teamID: key.teamID, publicKey: publicKey, topics: Set(key.topics))
            } catch {
                throw SimulatorError.invalidConfiguration(
                    "apnsKeys[\(index)].publicKeyPEM", "not a P-256 SPKI PEM: \(error)")
            }
        }
        var fcmAccounts: [String: FCMAccount] = [:]
        for (index, account) in configuration.fcmAccounts.enumerated() {
            do {
                let publicKey = try _RSA.Signing.PublicKey(pemRepresentation: account.publicKeyPEM)
                fcmAccounts[account.privateKeyID] = FCMAccount(
                    clientEmail: account.clientEmail, projectID: account.projectID, publicKey: publicKey)
            } catch {
                throw SimulatorError.invalidConfiguration(
                    "fcmAccounts[\(index)].publicKeyPEM", "not an RSA SPKI PEM: \(error)")
            }
        }
        self.apnsKeys = apnsKeys
        self.fcmAccounts = fcmAccounts
        self.fastMode = configuration.fastMode
        self.scenarios = configuration.scenarios
        self.state = SimulatorState(deadTokens: configuration.deadTokens, scenarioCount: configuration.scenarios.count)
    }

    /// The port the server listens on; OAuth assertions must name it in `aud`.
    /// 0 (before the server starts) skips the port check.
    public var serverPort: Int {
        get { state.port }
        set { state.port = newValue }
    }

    /// Answers one request as the provider owning its path would, and records the answer in the stats.
    public func respond(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        let path = request.path
        if path.hasPrefix("/3/device") {
            return respondAPNs(to: request, now: now)
        }
        if path.hasPrefix("/v1/projects/") {
            return respondFCM(to: request, now: now)
        }
        if path == "/token" || path.hasPrefix("/token?") {
            let response = respondOAuth(to: request, now: now)
            state.record(response, apnsID: nil)
            return response
        }
        let response = Self.apnsError(status: 404, reason: "BadPath", apnsID: nil, provider: "other")
        state.record(response, apnsID: nil)
        return response
    }

    /// Marks a device token unregistered from `since` on.
    public func markDead(token: String, since: Date) {
        state.markDead(token: token, since: since)
    }

    /// A snapshot of the stats so far.
    public func stats() -> SimulatorStats {
        state.stats()
    }

    /// The answer of the first scenario that applies to this request, if any.
    func scenarioResponse(provider: String, apnsID: String?) -> SimulatorResponse? {
        guard !scenarios.isEmpty else { return nil }
        var chosen: SimulatorResponse?
        for (index, scenario) in scenarios.enumerated() where scenario.provider == nil || scenario.provider == provider {
            let seen = state.countScenarioMatch(index)
            guard chosen == nil, seen >= scenario.afterRequests else { continue }
            if let count = scenario.count, seen >= scenario.afterRequests + count { continue }
            switch scenario.fault {
            case .httpError(let status, let retryAfter):
                var response =
                    provider == "apns"
                    ? Self.apnsError(status: status, reason: Self.apnsReason(forStatus: status), apnsID: apnsID)
                    : Self.fcmOverloadError(status: status)
                if let retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
                chosen = response
            }
        }
        return chosen
    }
}

extension SimulatorRules {
    /// A new lower-case UUID, as APNs makes when a request has no `apns-id`.
    static func newUUID() -> String {
        UUID().uuidString.lowercased()
    }

    /// Whether `text` is a UUID in the 8-4-4-4-12 hex form.
    static func isUUID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        for (offset, byte) in utf8.enumerated() {
            switch offset {
            case 8, 13, 18, 23: if byte != UInt8(ascii: "-") { return false }
            default: if !byte.isHexDigit { return false }
            }
        }
        return true
    }

    /// Whether `text` is a non-empty run of ASCII digits (an unsigned integer header).
    static func isUnsignedInteger(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 18
            && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The credential after `Bearer ` (scheme case-insensitive), or nil.
    static func bearerToken(_ header: String?) -> Substring? {
        guard let header else { return nil }
        let trimmed = header.drop(while: { $0 == " " })
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = trimmed.dropFirst(7).drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }

    static func seconds(since date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
