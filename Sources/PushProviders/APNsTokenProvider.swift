import PushCore
import Foundation

/// APNs provider tokens: ES256 JWTs signed with the team's `.p8` key.
///
/// A token is reused until it is `refreshInterval` old (default 50 min):
/// Apple rejects tokens older than 60 minutes and throttles refreshes more
/// frequent than every 20 minutes, so every request shares one token.
public final class APNsTokenProvider: Sendable {
    private struct Cached: Sendable {
        var token: String
        var issuedAt: Date
    }

    /// The Apple Developer team ID (`iss`).
    public let teamID: String
    /// The key's ID (`kid`).
    public let keyID: String
    private let key: EVPKey
    private let refreshSeconds: Double
    private let now: @Sendable () -> Date
    private let cache = Locked<Cached?>(nil)

    /// - Parameters:
    ///   - privateKeyPEM: the `.p8` file's content (PKCS#8 PEM, P-256 key).
    ///   - refreshInterval: age at which a new token is signed.
    ///   - now: the clock (injected so tests can move it).
    /// - Throws: `ProviderError.invalidKey` unless the key is a P-256 EC private key.
    public init(
        teamID: String, keyID: String, privateKeyPEM: String,
        refreshInterval: Duration = .seconds(3000),
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        guard !teamID.isEmpty, !keyID.isEmpty else {
            throw ProviderError.invalidKey("APNs teamID and keyID must not be empty")
        }
        let key = try EVPKey(pem: privateKeyPEM, kind: .privateKey)
        guard key.isEC, key.bits == 256 else {
            throw ProviderError.invalidKey("APNs key \(keyID) is not a P-256 EC private key")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
        let (seconds, attoseconds) = refreshInterval.components
        self.refreshSeconds = Double(seconds) + Double(attoseconds) / 1e18
        self.now = now
    }

    /// The token to send as `authorization: bearer <token>`, signing a new
    /// one if the cached one is too old (or the clock went backwards).
    public func currentToken() throws -> String {
        let now = self.now()
        return try cache.withLock { cached throws(ProviderError) -> String in
            if let current = cached {
                let age = now.timeIntervalSince(current.issuedAt)
                if age >= 0 && age < refreshSeconds { return current.token }
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let token = try JWT.es256(
                header: [("alg", .string("ES256")), ("kid", .string(keyID))],
                claims: [("iss", .string(teamID)), ("iat", .int(Int(issuedAt.timeIntervalSince1970)))],
                key: key)
            cached = Cached(token: token, issuedAt: issuedAt)
            return token
        }
    }

    /// Drops the cached token; the next `currentToken()` signs a new one.
    public func invalidate() {
        cache.withLock { $0 = nil }
    }

    /// Drops the cached token only if it is still `token`, so many requests
    /// rejected with the same stale token cause a single refresh.
    public func invalidate(ifCurrent token: String) {
        cache.withLock { cached in
            if cached?.token == token { cached = nil }
        }
    }
}
