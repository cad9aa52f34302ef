import Foundation

extension PushNotification {
    /// The visible alert: literal texts and/or localisation keys resolved on
    /// the device (APNs `aps.alert`, FCM `notification` / `android.notification`).
    public struct Alert: Sendable, Equatable {
        /// The title (APNs `title`, FCM `notification.title`).
        public var title: String?
        /// The text (APNs `body`, FCM `notification.body`).
        public var body: String?
        /// APNs only (Android has no subtitle).
        public var subtitle: String?
        /// APNs `title-loc-key` / FCM `title_loc_key`.
        public var titleLocKey: String?
        /// Arguments for `titleLocKey`'s format specifiers.
        public var titleLocArgs: [String]?
        /// APNs `subtitle-loc-key` (APNs only).
        public var subtitleLocKey: String?
        /// Arguments for `subtitleLocKey`.
        public var subtitleLocArgs: [String]?
        /// APNs `loc-key` / FCM `body_loc_key`.
        public var bodyLocKey: String?
        /// Arguments for `bodyLocKey` (APNs `loc-args`, FCM `body_loc_args`).
        public var bodyLocArgs: [String]?
        /// APNs `launch-image` (APNs only).
        public var launchImage: String?

        /// An alert; every part is optional.
        public init(
            title: String? = nil, body: String? = nil, subtitle: String? = nil,
            titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
            subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil,
            bodyLocKey: String? = nil, bodyLocArgs: [String]? = nil, launchImage: String? = nil
        ) {
            self.title = title
            self.body = body
            self.subtitle = subtitle
            self.titleLocKey = titleLocKey
            self.titleLocArgs = titleLocArgs
            self.subtitleLocKey = subtitleLocKey
            self.subtitleLocArgs = subtitleLocArgs
            self.bodyLocKey = bodyLocKey
            self.bodyLocArgs = bodyLocArgs
            self.launchImage = launchImage
        }

        /// True when nothing here would show: no text and no localisation key.
        public var isEmpty: Bool {
            // `?.isEmpty != false` reads each string in place; `(title ?? "")` made a copy
            // (a retain and a release) of each, 2 % of decoding a message.
            title?.isEmpty != false && body?.isEmpty != false && subtitle?.isEmpty != false
                && titleLocKey?.isEmpty != false && subtitleLocKey?.isEmpty != false && bodyLocKey?.isEmpty != false
        }
    }

    /// A sound: a file name, or Apple's critical-alert sound dictionary.
    /// A string literal is a plain sound name (`sound: "default"`).
    public struct Sound: Sendable, Equatable, ExpressibleByStringLiteral {
        /// Sound file in the app bundle or `Library/Sounds`, or `default`.
        public var name: String
        /// A critical alert (needs Apple's entitlement): plays even when muted.
        public var critical: Bool
        /// Critical alert volume, 0...1.
        public var volume: Double?

        /// A sound; `critical`/`volume` make it Apple's critical-alert sound.
        public init(name: String, critical: Bool = false, volume: Double? = nil) {
            self.name = name
            self.critical = critical
            self.volume = volume
        }

        /// A plain sound name.
        public init(stringLiteral value: String) {
            self.init(name: value)
        }

        /// Whether APNs needs the dictionary form (`{"critical":1,"name":…,"volume":…}`).
        public var needsDictionary: Bool { critical || volume != nil }
    }

    /// APNs `interruption-level`.
    public enum InterruptionLevel: String, Sendable, CaseIterable {
        case passive, active
        case timeSensitive = "time-sensitive"
        case critical
    }
}
