import Foundation

/// Builds Huawei Push Kit send bodies (`POST /v1/<appId>/messages:send`,
/// `{"validate_only":false,"message":{…}}`) from plain values, one token per
/// request as PushFleet sends everything.
///
/// Field names and shapes follow Huawei's "Sending Downlink Messages"
/// reference (developer.huawei.com/consumer/en/doc/HMSCore-References/https-send-api-0000001050986197)
/// and its message examples (…/HMSCore-Guides/rest-sample-code-0000001050040242,
/// …/HMSCore-Guides/android-offline-msg-cache-0000001050040130); value rules
/// follow Huawei's server sample HMS-Core/hms-push-serverdemo-java
/// (src/main/java/com/huawei/push/message/AndroidConfig.java: collapse_key
/// in -1…100, urgency HIGH or NORMAL; …/android/ClickAction.java: type 1 needs
/// an intent or action, type 2 an https url, type 3 opens the app).
public enum HMSTranslator {
    /// "The message body cannot exceed 4096 bytes (excluding the token)" (send API restrictions).
    public static let maxMessageBytes = 4096
    /// Push Kit caches a message for at most 15 days.
    public static let maxTTLSeconds: Int64 = 15 * 24 * 3600
    /// The shortest `android.ttl` sent: Huawei documents the TTL as a cache
    /// duration (1 day by default) and gives 0 no meaning, so "now or never"
    /// is sent as a one-second cache.
    public static let minTTLSeconds: Int64 = 1

    /// `android.urgency`.
    public enum Urgency: String, Sendable {
        case high = "HIGH"
        case normal = "NORMAL"
    }

    /// `android.notification.click_action`.
    public enum ClickAction: Sendable, Equatable {
        /// Type 3: open the app.
        case openApp
        /// Type 2: open an https URL.
        case url(String)
        /// Type 1 with an intent URI.
        case intent(String)
        /// Type 1 with an action name.
        case action(String)
    }

    /// One notification for one Push Kit token: a notification message
    /// (shown by the phone) when it has a title and a body, which Push Kit
    /// requires of every notification message; else a data message (`data`
    /// handed to the app), which shows nothing and so carries no image.
    public struct Message: Sendable {
        public var token: String
        public var title: String?
        public var body: String?
        /// Shown beside the title and body; left out of a data message.
        public var image: String?
        /// Sent as `message.data`, a JSON object encoded into one string (Push Kit's `data` is a string).
        public var data: [(key: String, value: String)]
        /// Mapped to Push Kit's integer `collapse_key` by `collapseKey(for:)`.
        public var collapseKey: String?
        public var urgency: Urgency
        /// Seconds Push Kit keeps the message for an offline device; sent
        /// within `minTTLSeconds`...`maxTTLSeconds`, and not at all when nil.
        public var ttlSeconds: Int64?
        public var category: String?
        public var biTag: String?
        public var clickAction: ClickAction

        public init(
            token: String, title: String? = nil, body: String? = nil, image: String? = nil,
            data: [(key: String, value: String)] = [], collapseKey: String? = nil, urgency: Urgency = .normal,
            ttlSeconds: Int64? = nil, category: String? = nil, biTag: String? = nil, clickAction: ClickAction = .openApp
        ) {
            self.token = token
            self.title = title
            self.body = body
            self.image = image
            self.data = data
            self.collapseKey = collapseKey
            self.urgency = urgency
            self.ttlSeconds = ttlSeconds
            self.category = category
            self.biTag = biTag
            self.clickAction = clickAction
        }

        /// A notification message (title and body), a data message (neither),
        /// or nil when it has only one of the two, which Push Kit refuses.
        var isNotification: Bool? {
            let hasTitle = !(title ?? "").isEmpty, hasBody = !(body ?? "").isEmpty
            return hasTitle == hasBody ? hasTitle : nil
        }
    }

    /// Why a message cannot be sent to Push Kit.
    public enum Failure: Error, Equatable, Sendable {
        case emptyToken
        /// The message without its token is `bytes` long, over `maxMessageBytes`.
        case tooLarge(bytes: Int)
        case negativeTTL
        /// A title without a body or a body without a title.
        case incompleteNotification
        /// A click action without its intent/action, or a URL that is not https.
        case invalidClickAction
    }

    /// `/v1/<appId>/messages:send`.
    public static func path(appID: String) -> String { "/v1/\(appID)/messages:send" }

    /// App ids (OAuth client ids) are 1–64 digits.
    public static func isValidAppID(_ appID: String) -> Bool {
        (1...64).contains(appID.utf8.count) && appID.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Push Kit's `collapse_key` is an integer in -1…100. A key that is such an
    /// integer's text is used as is; any other text maps to 1…100 by FNV-1a
    /// (32 bit) mod 100 + 1, stable across processes and releases, so equal
    /// keys always share a group (and unequal ones may, 1 in 100).
    public static func collapseKey(for key: String) -> Int {
        if let n = Int(key), (-1...100).contains(n) { return n }
        var hash: UInt32 = 0x811C_9DC5
        for byte in key.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return Int(hash % 100) + 1
    }
}
