import Foundation

/// The one total function from a provider response to what it means.
/// Every status and reason maps somewhere; nothing here can fail.
public enum ResponseClassifier {
    /// What `response` means. `now` only matters for a `Retry-After` given as an HTTP date.
    public static func classify(_ provider: Provider, _ response: ProviderResponse, now: Date = Date()) -> ProviderOutcome {
        let outcome = switch provider {
        case .apns: classifyAPNs(response, now: now)
        case .fcm: classifyFCM(response, now: now)
        case .webpush: classifyWebPush(response, now: now)
        case .hms: classifyHMS(response, now: now)
        }
        // The server's id of the message (apns-id, FCM's name, Push Kit's requestId,
        // Web Push's Location) is kept on the delivery row: a few dozen bytes, or cut.
        guard case .accepted(let id?) = outcome, id.utf8.count > maxProviderMessageIDBytes else { return outcome }
        return .accepted(providerMessageID: BoundedText.cut(id, maxBytes: maxProviderMessageIDBytes))
    }

    /// `provider_message_id` is at most this many UTF-8 bytes.
    public static let maxProviderMessageIDBytes = 256

    /// FCM asks for at least a minute before retrying a quota error.
    public static let fcmQuotaMinimumRetryAfter: Duration = .seconds(60)

    // MARK: APNs

    /// Reasons of APNs 400s that mean the token will never work for this topic.
    static let apnsDeadTokenReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic"]
    static let apnsAuthReasons: Set<String> = [
        "ExpiredProviderToken", "InvalidProviderToken", "MissingProviderToken",
        "BadCertificate", "BadCertificateEnvironment", "Forbidden",
        "BadEnvironmentKeyIdInToken", "UnrelatedKeyIdInToken",
    ]

    /// 400 reasons that are about the connection, not the request: try again.
    static let apnsTransient400Reasons: Set<String> = ["IdleTimeout"]

    static func classifyAPNs(_ response: ProviderResponse, now: Date) -> ProviderOutcome {
        let json = (try? JSONValue.parse(response.body))
        let reason = ProviderReason(json?["reason"]?.stringValue ?? (response.body.isEmpty ? "HTTP\(response.status)" : "Unparsed"))
        switch response.status {
        case 200:
            return .accepted(providerMessageID: response.header("apns-id"))
        case 410:
            var since: Date?
            if let ts = json?["timestamp"] {
                switch ts {
                case .int(let ms): since = Date(timeIntervalSince1970: Double(ms) / 1000)
                case .double(let ms): since = Date(timeIntervalSince1970: ms / 1000)
                case .string(let s): since = Double(s).map { Date(timeIntervalSince1970: $0 / 1000) }
                default: break
                }
            }
            // Not in the future, and a number ("inf" and "nan" parse as Doubles): a later
            // `since` would outrank every registration after it and keep the token dead.
            since = since.flatMap { $0.timeIntervalSince1970.isFinite ? min($0, now) : nil }
            return .invalidToken(reason: reason, since: since)
        case 400 where apnsDeadTokenReasons.contains(reason.rawValue):
            return .invalidToken(reason: reason, since: nil)
        case 400 where apnsTransient400Reasons.contains(reason.rawValue):
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        case 400, 404, 405, 413:
            return .rejected(reason: reason)
        case 403:
            if reason.rawValue == "TooManyProviderTokenUpdates" {
                return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
            }
            return apnsAuthReasons.contains(reason.rawValue) ? .authFailure(reason: reason) : .rejected(reason: reason)
        case 429, 500, 502, 503, 504:
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        default:
            return .unknown(status: response.status, reason: reason)
        }
    }

    // MARK: FCM

    static func classifyFCM(_ response: ProviderResponse, now: Date) -> ProviderOutcome {
        let json = try? JSONValue.parse(response.body)
        if response.status == 200 {
            return .accepted(providerMessageID: json?["name"]?.stringValue)
        }
        let error = json?["error"]
        let status = error?["status"]?.stringValue
        var errorCode: String?
        var tokenFieldViolation = false
        if case .array(let details)? = error?["details"] {
            for detail in details {
                if errorCode == nil, let code = detail["errorCode"]?.stringValue { errorCode = code }
                if case .array(let violations)? = detail["fieldViolations"],
                   violations.contains(where: { $0["field"]?.stringValue == "message.token" }) {
                    tokenFieldViolation = true
                }
            }
        }
        let message = error?["message"]?.stringValue ?? ""
        let code = errorCode ?? status ?? "HTTP\(response.status)"
        let reason = ProviderReason(code)
        switch code {
        case "UNREGISTERED", "SENDER_ID_MISMATCH":
            return .invalidToken(reason: reason, since: nil)
        case "INVALID_ARGUMENT":
            // FCM reports a malformed registration token as INVALID_ARGUMENT; only the
            // BadRequest field (message.token) or the message tells it apart.
            if tokenFieldViolation || message.localizedCaseInsensitiveContains("registration token") {
                return .invalidToken(reason: reason, since: nil)
            }
            return .rejected(reason: reason)
        case "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED":
            let after = retryAfter(response, now: now) ?? fcmQuotaMinimumRetryAfter
            return .transient(reason: reason, retryAfter: max(after, fcmQuotaMinimumRetryAfter))
        case "UNAVAILABLE", "INTERNAL":
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        case "THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED", "PERMISSION_DENIED":
            return .authFailure(reason: reason)
        case "NOT_FOUND":
            // Without FCM's UNREGISTERED detail a 404 is the request (a wrong project or
            // path), not the token: never invalidate devices for it.
            return .rejected(reason: reason)
        default:
            switch response.status {
            case 401, 403: return .authFailure(reason: reason)
            case 429, 500, 502, 503, 504: return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
            case 400, 404, 413: return .rejected(reason: reason)
            default: return .unknown(status: response.status, reason: reason)
            }
        }
    }

    /// `Retry-After` as delta-seconds or an HTTP date, at most an hour (`RetryAfter`).
    static func retryAfter(_ response: ProviderResponse, now: Date) -> Duration? {
        RetryAfter.parse(response.header("retry-after"), now: now)
    }
}
