import COpenSSL
import Foundation
import PushCore

/// Voluntary Application Server Identification (RFC 8292): the
/// `Authorization: vapid t=<JWT>, k=<public key>` header of every push request.
///
/// The JWT is ES256 (header `{"typ":"JWT","alg":"ES256"}`, raw r||s signature)
/// with claims `aud` = the push endpoint's origin, `exp` = now + `lifetime`
/// (at most 24 h, RFC 8292 §2) and `sub` = the configured contact (`mailto:` or
/// `https:`, §2.1). One token per audience is cached and reused until less than
/// `refreshMargin` of its life is left, so a push service sees few distinct
/// tokens and the fleet signs rarely. Safe to use from many tasks at once.
public final class VAPIDSigner: Sendable {
    /// The longest `exp` a push service must accept (RFC 8292 §2).
    public static let maxLifetime: Duration = .seconds(24 * 3600)

    /// The contact URI (`sub`).
    public let subject: String
    /// The application server's public key, uncompressed (65 bytes).
    public let publicKey: [UInt8]
    /// `publicKey` in base64url: the `k=` parameter, and what browsers subscribe with (`applicationServerKey`).
    public let publicKeyBase64URL: String

    private struct Entry {
        var header: String
        var token: String
        var issuedAt: Date
        var expires: Date
    }

    private struct Cache {
        var entries: [String: Entry] = [:]
        var mints = 0
    }

    /// Audiences kept at most; beyond it expiring entries are dropped, then all.
    static let maxAudiences = 10_000

    private let key: EVPKey
    private let lifetimeSeconds: Double
    private let refreshMarginSeconds: Double
    private let now: @Sendable () -> Date
    private let cache = Locked(Cache())

    /// - Parameters:
    ///   - privateKeyPEM: the VAPID key file's content (PKCS#8 or SEC1 PEM, P-256).
    ///   - subject: `mailto:…` or `https://…`; anything else is refused.
    ///   - lifetime: `exp` − now for new tokens, more than `refreshMargin` and at most 24 h (default 12 h).
    ///   - refreshMargin: a cached token with less life left is replaced (default 1 h).
    ///   - now: the clock (injected so tests can move it).
    /// - Throws: `.invalidVAPIDKey`, `.invalidSubject` or `.invalidParameter`, naming the input.
    public init(
        privateKeyPEM: String, subject: String, lifetime: Duration = .seconds(12 * 3600),
        refreshMargin: Duration = .seconds(3600), now: @escaping @Sendable () -> Date = Date.init
    ) throws(WebPushError) {
        guard Self.isValidSubject(subject) else {
            throw WebPushError.invalid(.invalidSubject, field: "subject", "must be a mailto: or https: URI, got \"\(subject)\"")
        }
        guard refreshMargin >= .zero, lifetime > refreshMargin, lifetime <= Self.maxLifetime else {
            throw WebPushError.invalid(
                .invalidParameter, field: "lifetime", "must be above the refresh margin and at most 24 hours")
        }
        let key: EVPKey
        do throws(ProviderError) {
            key = try EVPKey(pem: privateKeyPEM, kind: .privateKey)
        } catch {
            throw WebPushError.invalid(.invalidVAPIDKey, field: "privateKeyPEM", error.message)
        }
        guard key.isEC, key.bits == 256 else {
            throw WebPushError.invalid(.invalidVAPIDKey, field: "privateKeyPEM", "not a P-256 EC private key")
        }
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key.raw, "encoded-pub-key", &point, point.count, &length) == 1,
            length == 65, point[0] == 0x04
        else {
            _ = ProviderError.drainOpenSSLErrors()
            throw WebPushError.invalid(.invalidVAPIDKey, field: "privateKeyPEM", "cannot read its public key")
        }
        self.key = key
        self.subject = subject
        self.publicKey = point
        self.publicKeyBase64URL = Base64URL.encode(point)
        self.lifetimeSeconds = lifetime.timeInterval
        self.refreshMarginSeconds = refreshMargin.timeInterval
        self.now = now
    }

    /// How many JWTs were signed so far.
    public var mintCount: Int { cache.withLock { $0.mints } }

    /// The `Authorization` value for a push to `endpoint` (its origin is the audience).
    public func authorization(forEndpoint endpoint: String) throws(WebPushError) -> String {
        try authorization(audience: WebPushEndpoint(endpoint).origin)
    }

    /// `vapid t=<JWT>, k=<base64url public key>` for `audience` (an origin,
    /// `scheme://host[:port]`), reusing the cached JWT while it has more than
    /// `refreshMargin` left (and the clock has not gone back past its issue time).
    public func authorization(audience: String) throws(WebPushError) -> String {
        let now = self.now()
        let result = cache.withLock { cache -> Result<String, WebPushError> in
            if let entry = cache.entries[audience], entry.issuedAt <= now,
                entry.expires.timeIntervalSince(now) > refreshMarginSeconds
            {
                return .success(entry.header)
            }
            // Signed under the lock: many sends waiting on one audience cause one signature.
            let entry: Entry
            do throws(WebPushError) {
                entry = try mint(audience: audience, now: now)
            } catch {
                return .failure(error)
            }
            if cache.entries.count >= Self.maxAudiences {
                cache.entries = cache.entries.filter { $0.value.expires.timeIntervalSince(now) > refreshMarginSeconds }
                if cache.entries.count >= Self.maxAudiences { cache.entries.removeAll() }
            }
            cache.entries[audience] = entry
            cache.mints += 1
            return .success(entry.header)
        }
        return try result.get()
    }

    private func mint(audience: String, now: Date) throws(WebPushError) -> Entry {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expires = issuedAt.addingTimeInterval(lifetimeSeconds)
        guard let exp = Int(exactly: expires.timeIntervalSince1970.rounded(.down)) else {
            throw WebPushError.invalid(.invalidParameter, field: "now", "the clock is out of range")
        }
        let token: String
        do throws(ProviderError) {
            token = try JWT.es256(
                header: [("typ", .string("JWT")), ("alg", .string("ES256"))],
                claims: [("aud", .string(audience)), ("exp", .int(exp)), ("sub", .string(subject))],
                key: key)
        } catch {
            throw WebPushError(.crypto, error.message, openSSLCode: error.openSSLCode, file: #fileID, line: #line)
        }
        return Entry(
            header: "vapid t=\(token), k=\(publicKeyBase64URL)", token: token, issuedAt: issuedAt, expires: expires)
    }

    /// `mailto:` with an address, or an `https:` URL with a host (RFC 8292 §2.1).
    static func isValidSubject(_ subject: String) -> Bool {
        let lower = subject.lowercased()
        if lower.hasPrefix("mailto:") {
            let address = subject.dropFirst("mailto:".count)
            guard let at = address.firstIndex(of: "@") else { return false }
            return at != address.startIndex && address.index(after: at) != address.endIndex
                && !address.contains(where: { $0 == " " || $0 == "\n" || $0 == "\r" })
        }
        if lower.hasPrefix("https:") {
            guard let components = URLComponents(string: subject), let host = components.host else { return false }
            return !host.isEmpty
        }
        return false
    }
}
