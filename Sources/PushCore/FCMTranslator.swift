import Foundation

/// Translates notifications into FCM HTTP v1 requests
/// (`POST /v1/projects/<project>/messages:send` with a `message` body),
/// following Firebase's v1 `Message` reference.
public enum FCMTranslator {
    /// FCM's limit on a message to tokens.
    public static let maxMessageBytes = 4096
    /// FCM's limit on a message to a topic or condition.
    public static let maxTopicMessageBytes = 2048
    /// Android TTL cap: 28 days.
    public static let maxTTLSeconds: Int64 = 28 * 24 * 3600

    /// Exactly one target per message.
    public enum Target: Sendable, Hashable {
        case token(String)
        case topic(String)
        case condition(String)

        /// 4096 bytes for a token, 2048 for topic and condition messages.
        public var maxMessageBytes: Int {
            if case .token = self { return FCMTranslator.maxMessageBytes }
            return FCMTranslator.maxTopicMessageBytes
        }

        var kind: String {
            switch self {
            case .token: "token"
            case .topic: "topic"
            case .condition: "condition"
            }
        }

        var member: (key: String, value: JSONValue) {
            switch self {
            case .token(let t): ("token", .string(t))
            case .topic(let t): ("topic", .string(t))
            case .condition(let c): ("condition", .string(c))
            }
        }
    }

    /// Whether `token` looks like an FCM registration token.
    public static func isWellFormedToken(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard (20...4096).contains(utf8.count) else { return false }
        // Over the contiguous bytes, as the APNs check reads its token: iterating
        // `String.UTF8View` costs several times more per byte, and tokens run to 160+ bytes.
        var token = token
        return token.withUTF8 { $0.allSatisfy(isTokenByte) }
    }

    /// `[A-Za-z0-9_:-]`.
    @inline(__always)
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
    }

    /// Data keys FCM reserves, in any data map it receives (`message.data`,
    /// `android.data`, `webpush.data`): `from`, `message_type` and the
    /// prefixes `google.` and `gcm.` (the v1 reference names `google.` and
    /// `gcm.notification.`; the Android SDK reads every `gcm.` key). Words FCM
    /// merely overrides, such as `collapse_key`, are allowed.
    public static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google.") || key.hasPrefix("gcm.")
    }

    /// `isReservedDataKey` in words, for a rejection reason.
    static let reservedDataKeysText = "from, message_type, google.*, gcm.*"

    /// The first reserved key in any data map the message carries: `data`,
    /// and the `fcm.android.data` / `fcm.webpush.data` overrides.
    static func firstReservedDataKey(of n: PushNotification) -> String? {
        if let key = n.data.first(where: { isReservedDataKey($0.key) })?.key { return key }
        for block in [n.fcm.android, n.fcm.webpush] {
            guard let members = block.first(where: { $0.key == "data" })?.value.objectMembers else { continue }
            if let key = members.first(where: { isReservedDataKey($0.key) })?.key { return key }
        }
        return nil
    }

    /// Topic names: `[a-zA-Z0-9-_.~%]+`.
    public static func isValidTopicName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                || $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "%")
        }
    }

    /// FCM's `analytics_label` (in `fcm_options`, `android.fcm_options`,
    /// `apns.fcm_options`): `^[a-zA-Z0-9-_.~%]{1,50}$`, the topic-name
    /// characters and at most `maxAnalyticsLabelBytes`. FCM refuses a message
    /// whose label does not match.
    public static func isValidAnalyticsLabel(_ label: String) -> Bool {
        label.utf8.count <= maxAnalyticsLabelBytes && isValidTopicName(label)
    }

    /// The longest `analytics_label` FCM takes.
    public static let maxAnalyticsLabelBytes = 50

    /// How many `'name' in topics` terms a condition has: the occurrences of
    /// the bytes `in topics` (they cannot overlap), as the schema's pattern
    /// counts them; no Unicode-aware search that a combining mark could fool.
    public static func conditionTopicCount(_ condition: String) -> Int {
        let needle = Array("in topics".utf8)
        var condition = condition
        return condition.withUTF8 { b in
            var count = 0, i = 0
            while i + needle.count <= b.count {
                if b[i] == needle[0], needle.indices.allSatisfy({ b[i + $0] == needle[$0] }) {
                    count += 1
                    i += needle.count
                } else {
                    i += 1
                }
            }
            return count
        }
    }

    /// `#rrggbb`.
    static func isColor(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return u.count == 7 && u[0] == UInt8(ascii: "#") && u[1...].allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66)
        }
    }

    /// What `checkTTL` found.
    enum TTLCheck { case valid, malformed, tooLong }

    /// An `android.ttl` override, as the schema's pattern states it: a
    /// protobuf JSON duration `<digits>[.<1-9 digits>]s`, at most
    /// `maxTTLSeconds`, compared digit by digit (no floating point, no trap).
    static func checkTTL(_ s: String) -> TTLCheck {
        var s = s
        return s.withUTF8 { b in
            func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
            var i = 0
            var whole = 0  // capped: anything over the maximum stays over it
            while i < b.count, isDigit(b[i]) {
                whole = min(whole * 10 + Int(b[i] - 0x30), Int(maxTTLSeconds) + 1)
                i += 1
            }
            guard i > 0 else { return .malformed }
            var fractionIsZero = true
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                let start = i
                while i < b.count, isDigit(b[i]) {
                    if b[i] != UInt8(ascii: "0") { fractionIsZero = false }
                    i += 1
                }
                guard (1...9).contains(i - start) else { return .malformed }
            }
            guard i == b.count - 1, b[i] == UInt8(ascii: "s") else { return .malformed }
            if whole > Int(maxTTLSeconds) || (whole == Int(maxTTLSeconds) && !fractionIsZero) { return .tooLong }
            return .valid
        }
    }

    /// The request for one registration token. `now` is the reference for the
    /// relative `android.ttl` (default: `createdAt`, so it is reproducible).
    public static func request(for n: PushNotification, token: String, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        guard isWellFormedToken(token) else {
            return .failure(TranslationError(
                code: "INVALID_ARGUMENT", message: "FCM registration token must be 20-4096 characters of [A-Za-z0-9_:-]",
                tokenIsInvalid: true))
        }
        return request(for: n, target: .token(token), context: context, now: now)
    }

    /// The request for any target (token, topic or condition).
    public static func request(for n: PushNotification, target: Target, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        guard let project = context.fcmProjectID, !project.isEmpty else {
            return .failure(TranslationError(code: "MissingProject", message: "app \(n.app) has no FCM project configured"))
        }
        if let key = firstReservedDataKey(of: n) {
            return .failure(TranslationError(code: "ReservedKey", message: "FCM reserves the data key \"\(key)\""))
        }
        // One buffer: the wrapper first, the message written straight after it.
        var body: [UInt8] = []
        body.reserveCapacity(estimatedMessageBytes(for: n, target: target))
        body.append(contentsOf: #"{"message":"#.utf8)
        let messageStart = body.count
        writeMessage(for: n, target: target, now: now, into: &body)
        let messageBytes = body.count - messageStart
        guard messageBytes <= target.maxMessageBytes else {
            return .failure(TranslationError(
                code: "PayloadTooLarge",
                message: "FCM message is \(messageBytes) bytes, over the \(target.maxMessageBytes)-byte limit for a \(target.kind) message"))
        }
        body.append(UInt8(ascii: "}"))
        return .success(ProviderRequest(
            provider: .fcm, path: "/v1/projects/\(project)/messages:send",
            headers: [("content-type", "application/json; charset=utf-8")], body: body))
    }
}
