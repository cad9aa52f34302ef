import Foundation

extension HMSTranslator {
    /// Whether `token` can be a Push Kit token: 1–512 bytes of printable ASCII
    /// without spaces (Push Kit tokens are ~130 characters of letters, digits
    /// and `-_.:`; the bound only keeps garbage out of the request path).
    public static func isWellFormedToken(_ token: String) -> Bool {
        (1...512).contains(token.utf8.count) && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// What `isWellFormedToken` asks, for the reason of a refused token.
    public static let tokenRule = "a Push Kit token must be 1-512 bytes of printable ASCII without spaces"

    /// The message a notification makes for one Push Kit token:
    /// - `notification.title/body/image` from the alert and `image_url` when
    ///   the alert has a title and a body; none (a data message) when it has
    ///   neither, whatever the image;
    /// - `data` with every value as a string (non-strings as their JSON text);
    /// - `android.urgency` HIGH for high priority, else NORMAL;
    /// - `android.ttl`: the notification's lifetime (`PushNotification.storageSeconds`),
    ///   within 1 s (do-not-store) ... 15 days;
    /// - `android.collapse_key` from the collapse key (`collapseKey(for:)`);
    /// - `click_action` type 1 with the category as its action, else type 3 (open the app).
    public static func message(for n: PushNotification, token: String, now: Date?) -> Message {
        var data: [(key: String, value: String)] = []
        data.reserveCapacity(n.data.count)
        for (key, value) in n.data {
            if case .string(let s) = value { data.append((key, s)) } else { data.append((key, String(decoding: value.encoded(), as: UTF8.self))) }
        }
        let click: ClickAction = n.category.map { .action($0) } ?? .openApp
        return Message(
            token: token, title: n.alert?.title, body: n.alert?.body, image: n.imageURL, data: data,
            collapseKey: n.collapseKey, urgency: n.priority == .high ? .high : .normal,
            ttlSeconds: n.storageSeconds(now: now, cap: maxTTLSeconds),
            clickAction: click)
    }

    /// The Push Kit request for one token, or why there can be none.
    public static func request(for n: PushNotification, token: String, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        guard isWellFormedToken(token) else {
            return .failure(TranslationError(
                code: "InvalidToken", message: tokenRule,
                tokenIsInvalid: true))
        }
        guard let appID = context.hmsAppID, isValidAppID(appID) else {
            return .failure(TranslationError(code: "MissingAppID", message: "app \(n.app) has no Push Kit app id configured"))
        }
        do {
            let body = try body(for: message(for: n, token: token, now: now))
            return .success(ProviderRequest(
                provider: .hms, path: path(appID: appID),
                headers: [("content-type", "application/json; charset=utf-8")], body: body))
        } catch {
            switch error {
            case .emptyToken:
                return .failure(TranslationError(code: "InvalidToken", message: "the Push Kit token is empty", tokenIsInvalid: true))
            case .tooLarge(let bytes):
                return .failure(TranslationError(
                    code: "PayloadTooLarge",
                    message: "Push Kit message is \(bytes) bytes without its token, over the \(maxMessageBytes)-byte limit"))
            case .negativeTTL:
                return .failure(TranslationError(code: "InvalidTTL", message: "the Push Kit ttl is negative"))
            case .incompleteNotification:
                return .failure(TranslationError(
                    code: "IncompleteAlert", message: "Push Kit shows a notification only with both a title and a body"))
            case .invalidClickAction:
                return .failure(TranslationError(code: "InvalidClickAction", message: "the category cannot be a Push Kit click action"))
            }
        }
    }
}
