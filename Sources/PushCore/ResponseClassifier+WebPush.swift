import Foundation

extension ResponseClassifier {
    /// What a Web Push service's answer to a push message request means.
    ///
    /// - 201 Created (RFC 8030 §5) and 202 Accepted (§5.3, `Prefer: respond-async`):
    ///   accepted; the `Location` header names the push message resource (kept as the message id).
    /// - 404 Not Found (§7.3: an expired subscription) and 410 Gone (what push
    ///   services answer for an unsubscribed one): invalidate the subscription.
    /// - 413 Payload Too Large (§7.2; RFC 8291 §4: a service need accept only 4096 bytes): rejected.
    /// - 429 Too Many Requests (§8.4, load shedding) and every 5xx: transient, honouring `Retry-After`.
    /// - 400 Bad Request (a malformed request, e.g. a bad `TTL`, `Topic` or encoding): rejected.
    /// - 401 Unauthorized and 403 Forbidden: the VAPID credential is absent,
    ///   invalid or not the key the subscription is restricted to (RFC 8292 §4.2): auth failure.
    /// - Anything else, other 2xx included: unknown, kept verbatim.
    public static func classifyWebPush(_ response: ProviderResponse, now: Date) -> ProviderOutcome {
        let reason = ProviderReason(webPushReason(status: response.status))
        switch response.status {
        case 201, 202:
            return .accepted(providerMessageID: response.header("location"))
        case 404, 410:
            return .invalidToken(reason: reason, since: nil)
        case 400, 413:
            return .rejected(reason: reason)
        case 401, 403:
            return .authFailure(reason: reason)
        case 429, 500...599:
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        default:
            return .unknown(status: response.status, reason: reason)
        }
    }

    /// Web Push services answer with a status (bodies differ by vendor): the reason is the status's name.
    static func webPushReason(status: Int) -> String {
        switch status {
        case 201: "Created"
        case 202: "Accepted"
        case 400: "BadRequest"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "NotFound"
        case 410: "Gone"
        case 413: "PayloadTooLarge"
        case 429: "TooManyRequests"
        case 500: "InternalServerError"
        case 502: "BadGateway"
        case 503: "ServiceUnavailable"
        case 504: "GatewayTimeout"
        default: "HTTP\(status)"
        }
    }
}
