import Foundation

/// Huawei Push Kit (`POST /v1/<appId>/messages:send`). Push Kit reports in the
/// body's `code` as well as in the HTTP status, and answers errors with HTTP
/// 200 too, so the code decides whenever there is one.
///
/// HTTP statuses (Huawei's "Sending Downlink Messages" reference, HTTP status
/// table, developer.huawei.com/consumer/en/doc/HMSCore-References/https-send-api-0000001050986197):
/// 400 parameter error, 401 authentication failed, 404 wrong URL, 500 internal
/// error, 502 connection problem (try later), 503 traffic control (slow down).
/// Result codes: see `HMSResultCode`.
extension ResponseClassifier {
    /// Codes that refuse this message for good: retrying the same bytes cannot help.
    static let hmsRejectedCodes: Set<HMSResultCode> = [
        .invalidParameters, .tokenCountMustBeOne, .invalidMessageStructure, .ttlInThePast, .invalidCollapseKey,
        .sensitiveContent, .tooManyTopicMessages, .invalidMessageBody, .messageTooLarge, .tooManyTokens,
        .noHighPriorityPermission, .invalidReceiptURL,
    ]

    /// Codes about our credentials or the app's right to send (FCM's
    /// PERMISSION_DENIED is an auth failure too): retried, never final.
    static let hmsAuthCodes: Set<HMSResultCode> = [
        .oauthAuthenticationError, .oauthTokenExpired, .noPermission, .oauthServiceFailure,
    ]

    /// What one Push Kit answer means for the one token PushFleet sends per request.
    ///
    /// Total over status × body: 5xx, 429 and 503 flow control are transient
    /// (with `Retry-After` when given) whatever the body says; 401 is an auth
    /// failure; otherwise the result code decides (see the sets above), and a
    /// code we do not know falls back on the status, or is `unknown` with the
    /// code as its reason.
    public static func classifyHMS(_ response: ProviderResponse, now: Date) -> ProviderOutcome {
        let answer = HMSAnswer(body: response.body)
        let reason = ProviderReason(answer.code?.rawValue ?? "HTTP\(response.status)")
        switch response.status {
        case 429, 500...599:
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        case 401:
            return .authFailure(reason: reason)
        default:
            break
        }
        guard let code = answer.code else { return hmsByStatus(response, reason: reason) }
        switch code {
        case .success where (200...299).contains(response.status):
            return .accepted(providerMessageID: answer.requestID)
        case .partialSuccess:
            return hmsPartialSuccess(answer, reason: reason)
        case .allTokensInvalid:
            return .invalidToken(reason: reason, since: nil)
        case .internalError:
            return .transient(reason: reason, retryAfter: retryAfter(response, now: now))
        case _ where hmsRejectedCodes.contains(code):
            return .rejected(reason: reason)
        case _ where hmsAuthCodes.contains(code):
            return .authFailure(reason: reason)
        default:
            return hmsByStatus(response, reason: reason)
        }
    }

    /// A partial success for a one-token request means that token failed,
    /// unless `msg` plainly says it succeeded (success ≥ 1, no failure, no
    /// illegal token). A `msg` that is not JSON still means the token failed:
    /// the code alone says so.
    static func hmsPartialSuccess(_ answer: HMSAnswer, reason: ProviderReason) -> ProviderOutcome {
        if let result = answer.message.flatMap(HMSPartialResult.init(msg:)),
           result.illegalTokens.isEmpty, (result.failure ?? 0) == 0, (result.success ?? 0) >= 1 {
            return .accepted(providerMessageID: answer.requestID)
        }
        return .invalidToken(reason: reason, since: nil)
    }

    /// No code we know: the HTTP status decides.
    static func hmsByStatus(_ response: ProviderResponse, reason: ProviderReason) -> ProviderOutcome {
        switch response.status {
        case 403: .authFailure(reason: reason)
        case 400, 404, 405, 413: .rejected(reason: reason)
        default: .unknown(status: response.status, reason: reason)
        }
    }
}
