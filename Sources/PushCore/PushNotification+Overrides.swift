import Foundation

/// APNs `apns-push-type` values, with the topic Apple requires for each.
public enum APNsPushType: String, Sendable, CaseIterable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets

    /// What Apple requires appended to the bundle id in `apns-topic`
    /// (nil: the bundle id itself; for `mdm` the MDM topic as given).
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: nil
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        }
    }

    /// Apple's payload limit: 5120 bytes for VoIP, 4096 for everything else.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }
}

/// Raw APNs overrides from the intake's `apns` object.
public struct APNsOverrides: Sendable, Equatable {
    /// `apns.push_type`; inferred from the content when nil.
    public var pushType: APNsPushType?
    /// `apns.topic`: used as given instead of the app's topic (required for `mdm`).
    public var topic: String?
    /// `apns.aps`: extra `aps` keys (Live Activity `content-state`, `event`, `timestamp`,
    /// `filter-criteria`, …); a key also generated from the envelope replaces it in place.
    public var aps: [(key: String, value: JSONValue)]
    /// `apns.headers`: `apns-priority`, `apns-expiration`, `apns-collapse-id` overrides.
    public var headers: [(name: String, value: String)]

    /// Header names the intake may override (the others are derived and must stay consistent).
    public static let overridableHeaders: Set<String> = ["apns-priority", "apns-expiration", "apns-collapse-id"]

    /// Overrides; all empty by default.
    public init(pushType: APNsPushType? = nil, topic: String? = nil,
                aps: [(key: String, value: JSONValue)] = [], headers: [(name: String, value: String)] = []) {
        self.pushType = pushType
        self.topic = topic
        self.aps = aps
        self.headers = headers
    }

    /// True when nothing is overridden.
    public var isEmpty: Bool { pushType == nil && topic == nil && aps.isEmpty && headers.isEmpty }

    /// The overriding value of a (lower-case) header, if any.
    public func header(_ name: String) -> String? { headers.first(where: { $0.name == name })?.value }

    public static func == (lhs: APNsOverrides, rhs: APNsOverrides) -> Bool {
        lhs.pushType == rhs.pushType && lhs.topic == rhs.topic && JSONValue.object(lhs.aps) == JSONValue.object(rhs.aps)
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// Raw FCM overrides from the intake's `fcm` object: each block is deep-merged
/// over what the translator generates (objects merge, other values replace).
public struct FCMOverrides: Sendable, Equatable {
    /// `message.android` (`AndroidConfig`): `notification.channel_id`, `icon`, `color`, `tag`, …
    public var android: [(key: String, value: JSONValue)]
    /// `message.webpush` (`WebpushConfig`).
    public var webpush: [(key: String, value: JSONValue)]
    /// `message.apns` (`ApnsConfig`: `headers`, `payload`, `fcm_options`).
    public var apns: [(key: String, value: JSONValue)]
    /// `message.fcm_options` (`analytics_label`).
    public var fcmOptions: [(key: String, value: JSONValue)]

    /// Overrides; all empty by default.
    public init(android: [(key: String, value: JSONValue)] = [], webpush: [(key: String, value: JSONValue)] = [],
                apns: [(key: String, value: JSONValue)] = [], fcmOptions: [(key: String, value: JSONValue)] = []) {
        self.android = android
        self.webpush = webpush
        self.apns = apns
        self.fcmOptions = fcmOptions
    }

    /// True when nothing is overridden.
    public var isEmpty: Bool { android.isEmpty && webpush.isEmpty && apns.isEmpty && fcmOptions.isEmpty }

    public static func == (lhs: FCMOverrides, rhs: FCMOverrides) -> Bool {
        JSONValue.object(lhs.android) == JSONValue.object(rhs.android)
            && JSONValue.object(lhs.webpush) == JSONValue.object(rhs.webpush)
            && JSONValue.object(lhs.apns) == JSONValue.object(rhs.apns)
            && JSONValue.object(lhs.fcmOptions) == JSONValue.object(rhs.fcmOptions)
    }
}
