import PushCore
import Foundation

/// APNs provider tokens: ES256 JWTs signed with the team's `.p8` key.
///
/// A token is reused until it is `refreshInterval` old (default 50 min,
/// allowed 20–60): Apple rejects tokens older than 60 minutes and throttles
/// refreshes more frequent than every 20 minutes, so every request shares one
/// token. After `429 TooManyProviderTokenUpdates` minting is held for a while:
/// the current token is kept, however old, and `invalidate` is ignored.
public final class APNsTokenProvider: Sendable {
    struct State: Sendable {
        var token: String?
        /// `bearer <token>`, built once per token rather than per request.
        var authorization = ""
        var issuedAt = Date.distantPast
        var mints = 0
        var holdUntil: Date?
    }

    /// A token and its `authorization` header value.
    struct Credential: Sendable {
        var token: String
        var authorization: String
    }

    /// The shortest and longest refresh interval Apple's rules allow.
    public static let allowedRefreshIntervals: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(60 * 60)

    /// The Apple Developer team ID (`iss`).
    public let teamID: String
    /// The key's ID (`kid`).
    public let keyID: String
    private let key: EVPKey?
    private let refreshSeconds: Double
    private let now: @Sendable () -> Date
    private let state = Locked(State())

    /// - Parameters:
    ///   - privateKeyPEM: the `.p8` file's content (PKCS#8 PEM, P-256 key).
    ///   - refreshInterval: age at which a new token is signed (20–60 minutes).
    ///   - now: the clock (injected so tests can move it).
    /// - Throws: `ProviderError.invalidKey` unless the key is a P-256 EC private key;
    ///   `.invalidConfiguration` if `refreshInterval` is outside 20–60 minutes.
    public init(
        teamID: String, keyID: String, privateKeyPEM: String,
        refreshInterval: Duration = .seconds(3000),
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        guard !teamID.isEmpty, !keyID.isEmpty else {
            throw ProviderError.invalidKey("APNs teamID and keyID must not be empty")
        }
        guard Self.allowedRefreshIntervals.contains(refreshInterval) else {
            throw ProviderError.invalidConfiguration(
                "apns.token_refresh_interval", "must be between 20 and 60 minutes, got \(refreshInterval)")
        }
        let key = try EVPKey(pem: privateKeyPEM, kind: .privateKey)
        guard key.isEC, key.bits == 256 else {
            throw ProviderError.invalidKey("APNs key \(keyID) is not a P-256 EC private key")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
        self.refreshSeconds = refreshInterval.timeInterval
        self.now = now
    }

    /// A provider for a certificate-authenticated client: it has no key, and
    /// `currentToken()` throws `.invalidConfiguration`.
    init(certificateAuthenticated teamID: String) {
        self.teamID = teamID
        self.keyID = ""
        self.key = nil
        self.refreshSeconds = 0
        self.now = Date.init
    }

    /// How many tokens were signed (each is a provider-token update for Apple).
    public var mintCount: Int { state.withLock { $0.mints } }

    /// The token to send as `authorization: bearer <token>`, signing a new
    /// one if the cached one is too old (or the clock went backwards), unless
    /// minting is held.
    public func currentToken() throws -> String { try currentCredential().token }

    /// The current token and its `authorization` header value (`bearer <token>`),
    /// as `currentToken()` decides it.
    func currentCredential() throws -> Credential {
        guard let key else {
            throw ProviderError.invalidConfiguration("apns.auth", "this client authenticates with a certificate")
        }
        let now = self.now()
        return try state.withLock { state throws(ProviderError) -> Credential in
            if let token = state.token {
                let age = now.timeIntervalSince(state.issuedAt)
                if age >= 0 && age < refreshSeconds { return Credential(token: token, authorization: state.authorization) }
                if let hold = state.holdUntil, now < hold { return Credential(token: token, authorization: state.authorization) }
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let token = try JWT.es256(
                header: [("alg", .string("ES256")), ("kid", .string(keyID))],
                claims: [("iss", .string(teamID)), ("iat", .int(Int(issuedAt.timeIntervalSince1970)))],
                key: key)
            state.token = token
            state.authorization = "bearer " + token
            state.issuedAt = issuedAt
            state.mints += 1
            return Credential(token: token, authorization: state.authorization)
        }
    }

    /// Drops the cached token; the next `currentToken()` signs a new one
    /// (unless minting is held).
    public func invalidate() {
        let now = self.now()
        state.withLock { state in
            if let hold = state.holdUntil, now < hold { return }
            state.token = nil
        }
    }

    /// Drops the cached token only if it is still `token`, so many requests
    /// rejected with the same stale token cause a single refresh. Returns
    /// whether it was dropped.
    @discardableResult
    public func invalidate(ifCurrent token: String) -> Bool {
        let now = self.now()
        return state.withLock { state in
            if let hold = state.holdUntil, now < hold { return false }
            guard state.token == token else { return false }
            state.token = nil
            return true
        }
    }

    /// APNs said `TooManyProviderTokenUpdates`: sign nothing new for `duration`.
    public func holdMinting(for duration: Duration) {
        let until = now().addingTimeInterval(duration.timeInterval)
        state.withLock { state in state.holdUntil = max(state.holdUntil ?? until, until) }
    }
}
