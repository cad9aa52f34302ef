import Crypto
import Foundation
import PushCore

/// What the Web Push endpoint knows from the configuration.
struct SimulatorWebPush: Sendable {
    /// Accepted VAPID public keys (uncompressed points); empty accepts any valid key.
    let allowedKeys: Set<[UInt8]>
    /// Where decrypted messages go; nil records none.
    let inbox: SimulatorWebPushInbox?

    init(configuration: SimulatorConfiguration) throws {
        var keys = Set<[UInt8]>()
        for (index, text) in configuration.webPushVAPIDKeys.enumerated() {
            guard let bytes = Base64URL.decode(Substring(text)),
                (try? P256.Signing.PublicKey(x963Representation: bytes)) != nil, bytes.count == 65
            else {
                throw SimulatorError.invalidConfiguration(
                    "webPushVAPIDKeys[\(index)]", "not a base64url uncompressed P-256 public key")
            }
            keys.insert(bytes)
        }
        allowedKeys = keys
        inbox = configuration.webPushInbox
    }
}

/// A Web Push service (RFC 8030 §5): `POST /wp/<subscription-id>`, following
/// RFC 8030, RFC 8291 (`aes128gcm` message encryption) and RFC 8292 (VAPID).
///
/// Checks, in order: the path names a subscription (else 404); `POST` (405);
/// a `vapid` Authorization (absent → 401); its `k` is a P-256 key the
/// configuration allows, `t` an ES256 JWT signed by it whose `aud` is this
/// server's https origin, `exp` in the future and at most 24 h ahead, `sub`
/// `mailto:` or `https:` (any failure → 403, RFC 8292 §4.2: present but
/// invalid); the id's scenario (see `SimulatorWebPushSubscriptions`);
/// `TTL` present and an unsigned integer, `Urgency` and `Topic` well-formed (400);
/// a body of at most 4096 bytes (413, RFC 8030 §7.2); `Content-Encoding:
/// aes128gcm` for a non-empty body (400); and the body decrypts with the
/// subscription's key as one record ending in the 0x02 delimiter (400). Then
/// 201 with a `Location`, and the plaintext goes to the inbox.
///
/// The transport does not hand the rules `:authority`, so `aud` is compared
/// with this server's port, not its host name.
extension SimulatorRules {
    static let webPushMaxBody = 4096
    static let webPushMaxLifetime: Int64 = 24 * 3600
    static let webPushRetryAfterSeconds = 7

    func respondWebPush(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        let response = checkWebPush(request, now: now)
        state.record(response, apnsID: nil)
        return response
    }

    private func checkWebPush(_ request: SimulatorRequest, now: Date) -> SimulatorResponse {
        func fail(_ status: Int, _ reason: String, _ message: String) -> SimulatorResponse {
            Self.webPushError(status: status, reason: reason, message: message)
        }
        let prefix = SimulatorWebPushSubscriptions.pathPrefix
        let id = String(request.path.dropFirst(prefix.count))
        guard request.path.hasPrefix(prefix), !id.isEmpty, !id.contains("/"), !id.contains("?") else {
            return fail(404, "NotFound", "no such subscription")
        }
        if fastMode { return webPushCreated() }
        guard request.method == "POST" else { return fail(405, "MethodNotAllowed", "push messages are POSTed") }

        let vapidKey: String
        switch checkVAPID(request.header("authorization"), now: now) {
        case .success(let key): vapidKey = key
        case .failure(let failure): return fail(failure.status, failure.reason, failure.message)
        }

        if id.hasPrefix("gone-") { return fail(410, "Gone", "the subscription was removed") }
        if id.hasPrefix("missing-") { return fail(404, "NotFound", "the subscription expired") }
        if id.hasPrefix("toolarge-") { return fail(413, "PayloadTooLarge", "this subscription takes no payload this size") }
        if id.hasPrefix("slow-") || id.hasPrefix("ratelimited-") {
            var response = fail(429, "TooManyRequests", "slow down")
            response.headers.append(("retry-after", String(Self.webPushRetryAfterSeconds)))
            return response
        }

        guard let ttlText = request.header("ttl") else { return fail(400, "MissingTTL", "the TTL header is required") }
        guard Self.isUnsignedInteger(ttlText), let ttl = Int(ttlText) else {
            return fail(400, "BadTTL", "TTL must be delta-seconds")
        }
        let urgency = request.header("urgency") ?? "normal"
        guard ["very-low", "low", "normal", "high"].contains(urgency) else {
            return fail(400, "BadUrgency", "Urgency must be very-low, low, normal or high")
        }
        let topic = request.header("topic")
        if let topic {
            guard !topic.isEmpty, topic.utf8.count <= 32, Base64URL.decode(Substring(topic)) != nil, !topic.contains("=")
            else { return fail(400, "BadTopic", "Topic must be 1-32 base64url characters") }
        }
        guard request.body.count <= Self.webPushMaxBody else {
            return fail(413, "PayloadTooLarge", "the body is \(request.body.count) bytes; at most 4096 are accepted")
        }
        var plaintext: [UInt8] = []
        if !request.body.isEmpty {
            guard request.header("content-encoding")?.lowercased() == "aes128gcm" else {
                return fail(400, "BadContentEncoding", "the body must be encoded aes128gcm")
            }
            switch Self.decryptWebPush(request.body, subscriptionID: id) {
            case .success(let bytes): plaintext = bytes
            case .failure(let failure): return fail(400, "DecryptionFailed", failure.message)
            }
        }
        webPush.inbox?.record(
            SimulatorWebPushDelivery(
                subscriptionID: id, plaintext: plaintext, ttl: ttl, urgency: urgency, topic: topic, vapidKey: vapidKey))
        return webPushCreated()
    }

    private func webPushCreated() -> SimulatorResponse {
        SimulatorResponse(
            status: 201, headers: [("location", "/wp-message/\(state.nextMessageNumber())")], body: [],
            provider: "webpush", reason: "Created")
    }

    static func webPushError(status: Int, reason: String, message: String) -> SimulatorResponse {
        let body = "{\"code\":\(status),\"reason\":" + JSONWriter.quoted(reason) + ",\"message\":"
            + JSONWriter.quoted(message) + "}"
        return SimulatorResponse(
            status: status, headers: [("content-type", "application/json")], body: Array(body.utf8),
            provider: "webpush", reason: reason)
    }
}
