import Crypto
import Foundation
import Logging
import PushCore
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
    let scenarioBook: ScenarioBook
    let fastMode: Bool
    /// The APNs host this simulator plays (nil: either).
    let apnsEnvironment: SimulatorAPNsEnvironment?
    /// New provider tokens per key tolerated within `providerTokenUpdateWindow` (nil: no limit).
    let tokenUpdateAllowance: Int?
    /// MAX_CONCURRENT_STREAMS advertised once a connection is fully open.
    let maxConcurrentStreams: Int
    /// By key ID (`kid`).
    let apnsKeys: [String: APNsKey]
    /// By private key ID (`kid`).
    let fcmAccounts: [String: FCMAccount]
    /// Accepted VAPID keys and the inbox of decrypted Web Push messages.
    let webPush: SimulatorWebPush
    /// Huawei Push Kit apps by app id.
    let hmsApps: [String: SimulatorHMSApp]

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
        self.webPush = try SimulatorWebPush(configuration: configuration)
        self.hmsApps = Dictionary(configuration.hmsApps.map { ($0.clientID ?? $0.appID, $0) }, uniquingKeysWith: { first, _ in first })
        self.fastMode = configuration.fastMode
        self.apnsEnvironment = configuration.apnsEnvironment
        self.tokenUpdateAllowance = configuration.apnsTokenUpdateAllowance
        self.maxConcurrentStreams = configuration.maxConcurrentStreams
        self.scenarioBook = ScenarioBook(configuration.scenarios, epoch: Date())
        self.state = SimulatorState(
            deadTokens: configuration.deadTokens, tokenEnvironments: configuration.tokenEnvironments,
            recordSendIDs: configuration.recordSendIDs, maxRecordedSendIDs: configuration.maxRecordedSendIDs,
            requestLogLimit: max(0, configuration.requestLog))
    }

    /// The scenarios in effect.
    public var scenarios: [SimulatorScenario] {
        scenarioBook.scenarios
    }

    /// Replaces the scenarios; their counters restart and their windows count from `now`.
    public func setScenarios(_ scenarios: [SimulatorScenario], now: Date = Date()) throws {
        try SimulatorConfiguration.validate(scenarios: scenarios)
        scenarioBook.replace(with: scenarios, epoch: now)
    }

    /// The port the server listens on; OAuth assertions must name it in `aud`.
    /// 0 (before the server starts) skips the port check.
    public var serverPort: Int {
        get { state.port }
        set { state.port = newValue }
    }

    /// Answers one request as the provider owning its path would, and records the answer in the stats.
    public func respond(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        answer(to: request, now: now).response
    }

    /// The answer plus what the transport needs to know about it.
    func answer(to request: SimulatorRequest, now: Date) -> SimulatorAnswer {
        let provider = Self.provider(forPath: request.path)
        var answer: SimulatorAnswer
        switch provider {
        case "apns":
            answer = answerAPNs(to: request, now: now)
        case "fcm":
            answer = SimulatorAnswer(response: respondFCM(to: request, now: now))
        case "oauth":
            answer = SimulatorAnswer(response: respondOAuth(to: request, now: now))
            state.record(answer.response, apnsID: nil)
        case "webpush":
            answer = SimulatorAnswer(response: respondWebPush(to: request, now: now))
        case "hms":
            answer = SimulatorAnswer(response: respondHMS(to: request, now: now))
            state.record(answer.response, apnsID: nil)
        case "hms-oauth":
            answer = SimulatorAnswer(response: respondHMSOAuth(to: request, now: now))
            state.record(answer.response, apnsID: nil)
        default:
            answer = SimulatorAnswer(response: Self.apnsError(status: 404, reason: "BadPath", apnsID: nil, provider: "other"))
            state.record(answer.response, apnsID: nil)
        }
        if state.requestLogLimit > 0, ["apns", "fcm", "webpush", "hms"].contains(provider) {
            state.log(SimulatorRequestRecord(at: now.timeIntervalSince1970, provider: provider,
                                             target: Self.logTarget(of: request, provider: provider), status: answer.response.status))
        }
        if !scenarioBook.isEmpty {
            let delay = scenarioBook.take(provider: provider, now: now) {
                if case .delay = $0 { return true } else { return false }
            }
            if case .delay(let milliseconds)? = delay { answer.delayMilliseconds = milliseconds }
            let oversized = scenarioBook.take(provider: provider, now: now) {
                if case .oversizedAnswer = $0 { return true } else { return false }
            }
            if case .oversizedAnswer(let bodyBytes, let headers)? = oversized {
                answer.response.body += [UInt8](repeating: UInt8(ascii: " "), count: bodyBytes)
                for i in 0..<headers { answer.response.headers.append(("x-pad-\(i)", String(repeating: "p", count: 40))) }
            }
            scenarioBook.noteRequest(provider: provider)
        }
        return answer
    }

    /// `apns`, `fcm`, `oauth`, `webpush`, `hms`, `hms-oauth` or `other`, from the request path.
    static func provider(forPath path: String) -> String {
        if path.hasPrefix("/3/device") { return "apns" }
        if path.hasPrefix(SimulatorWebPushSubscriptions.pathPrefix) { return "webpush" }
        if path.hasPrefix("/v1/projects/") { return "fcm" }
        if path == "/token" || path.hasPrefix("/token?") { return "oauth" }
        if hmsAppID(inPath: path) != nil { return "hms" }
        if path == hmsTokenPath || path.hasPrefix(hmsTokenPath + "?") { return "hms-oauth" }
        return "other"
    }

    /// Marks a device token unregistered from `since` on.
    public func markDead(token: String, since: Date) {
        state.markDead(token: token, since: since)
    }

    /// A snapshot of the stats so far.
    public func stats() -> SimulatorStats {
        state.stats()
    }

    /// The `httpError` answer of the first live scenario for this request, if any.
    func scenarioResponse(provider: String, apnsID: String?, now: Date) -> SimulatorResponse? {
        guard !scenarioBook.isEmpty,
            case .httpError(let status, let retryAfter)? = scenarioBook.take(provider: provider, now: now, where: {
                if case .httpError = $0 { return true } else { return false }
            })
        else { return nil }
        var response: SimulatorResponse
        switch provider {
        case "apns": response = Self.apnsError(status: status, reason: Self.apnsReason(forStatus: status), apnsID: apnsID)
        case "oauth":
            response = Self.oauthError(
                status: status, error: status == 429 ? "rate_limit_exceeded" : "temporarily_unavailable",
                description: "The token endpoint is unavailable (simulated).")
        default: response = Self.fcmOverloadError(status: status)
        }
        if let retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
        return response
    }
}

/// What the rules decided for one request, for the transport.
struct SimulatorAnswer: Sendable {
    var response: SimulatorResponse
    /// The valid `apns-id` the request carried (what `apnsSendsByID` counts).
    var apnsID: String?
    /// Hold the answer back this long (`delay` scenario).
    var delayMilliseconds = 0
    /// An APNs request whose provider token or client certificate was accepted.
    var validCredential = false

    init(response: SimulatorResponse, apnsID: String? = nil, validCredential: Bool = false) {
        self.response = response
        self.apnsID = apnsID
        self.validCredential = validCredential
    }

    /// The debug line every transport writes for an error answer.
    func logIfError(path: String, logger: Logger) {
        guard response.status >= 400 else { return }
        logger.debug(
            "simulator answered an error",
            metadata: ["sim.path": "\(path)", "sim.status": "\(response.status)", "sim.reason": "\(response.reason)"])
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

extension SimulatorRules {
    /// Whom a logged request was for: the APNs device token (the path's
    /// last segment), FCM's `message.token` (or `topic:` / `condition:`), else the path.
    static func logTarget(of request: SimulatorRequest, provider: String) -> String {
        switch provider {
        case "apns":
            return String(request.path.dropFirst(apnsPathPrefix.count).prefix { $0 != "?" })
        case "fcm":
            guard let body = try? JSONValue.parse(request.body), let message = body["message"] else { return request.path }
            if let token = message["token"]?.stringValue { return token }
            if let topic = message["topic"]?.stringValue { return "topic:" + topic }
            if let condition = message["condition"]?.stringValue { return "condition:" + condition }
            return request.path
        default:
            return request.path
        }
    }
}
