import Foundation

/// A platform-agnostic notification as product services publish it to
/// `push.notifications` (see `schemas/notification.schema.json`).
public struct PushNotification: Sendable, Equatable {
    /// The intake schema versions this build understands.
    public static let supportedSchemaVersions: ClosedRange<Int> = 1...1

    /// The intake schema version the producer wrote.
    public var schemaVersion: Int { didSet { apnsPayload = nil } }
    /// Producer-assigned id; with the device it keys the delivery ledger.
    public var id: UUID { didSet { apnsPayload = nil } }
    /// The app this is for (a key of the worker's app configuration).
    public var app: String { didSet { apnsPayload = nil } }
    /// When the product created it; deliveries are partitioned by its day.
    public var createdAt: Date { didSet { apnsPayload = nil } }
    /// Absolute expiry; past it the notification is recorded `expired` and not sent.
    public var expiresAt: Date? { didSet { apnsPayload = nil } }
    /// Delivery urgency.
    public var priority: Priority { didSet { apnsPayload = nil } }
    /// Newer notifications with the same key replace older ones (at most 64 bytes).
    public var collapseKey: String? { didSet { apnsPayload = nil } }
    /// Device-token recipients: what the worker sends to, one request each.
    public var recipients: [Recipient] { didSet { apnsPayload = nil } }
    /// What the user sees.
    public var alert: Alert? { didSet { apnsPayload = nil } }
    /// The app icon badge (APNs `badge`, FCM `notification_count`).
    public var badge: Int? { didSet { apnsPayload = nil } }
    /// The sound to play.
    public var sound: Sound? { didSet { apnsPayload = nil } }
    /// Silent/background notification (APNs `content-available`).
    public var contentAvailable: Bool { didSet { apnsPayload = nil } }
    /// Custom key-value data delivered to the app (outside `aps` on APNs, `data` on FCM).
    public var data: [(key: String, value: JSONValue)] { didSet { apnsPayload = nil } }

    /// Recipients given by user id (`{"user_id": …}`); the worker resolves them to devices.
    public var userRecipients: [String] = [] { didSet { apnsPayload = nil } }
    /// FCM topic or condition targets (`{"topic": …}`, `{"condition": …}`): one FCM request each.
    public var fcmTargets: [FCMTarget] = [] { didSet { apnsPayload = nil } }
    /// APNs `category` / FCM `android.notification.click_action`: the app's action set.
    public var category: String? { didSet { apnsPayload = nil } }
    /// APNs `thread-id`: groups notifications on the device.
    public var threadID: String? { didSet { apnsPayload = nil } }
    /// APNs `mutable-content`: let the app's notification service extension modify it.
    public var mutableContent: Bool = false { didSet { apnsPayload = nil } }
    /// APNs `interruption-level` (iOS 15+).
    public var interruptionLevel: InterruptionLevel? { didSet { apnsPayload = nil } }
    /// APNs `relevance-score`, 0...1: ordering in the notification summary.
    public var relevanceScore: Double? { didSet { apnsPayload = nil } }
    /// APNs `target-content-id`: the window/content to bring forward.
    public var targetContentID: String? { didSet { apnsPayload = nil } }
    /// Image URL: FCM `notification.image` (and `apns.fcm_options.image` for topic targets).
    public var imageURL: String? { didSet { apnsPayload = nil } }
    /// `ttl_seconds: 0`: deliver only if the device is reachable now
    /// (`apns-expiration: 0`, FCM `ttl: "0s"`); the provider does not store it.
    public var doNotStore: Bool = false { didSet { apnsPayload = nil } }
    /// Per-platform raw overrides for APNs (push type, topic, extra `aps` keys, headers).
    public var apns: APNsOverrides = APNsOverrides() { didSet { apnsPayload = nil } }
    /// Per-platform raw overrides for FCM (`android`, `webpush`, `apns`, `fcm_options` blocks).
    public var fcm: FCMOverrides = FCMOverrides() { didSet { apnsPayload = nil } }
    /// The campaign this notification belongs to (`Campaign`'s rules): kept
    /// on every delivery row it makes, stopped by `pushfleet campaign cancel`,
    /// and FCM's `fcm_options.analytics_label` when that is not set and the
    /// campaign is a valid label. Not sent to APNs, Web Push or Push Kit.
    public var campaign: String? = nil { didSet { apnsPayload = nil } }

    /// The APNs payload (`APNsTranslator.payload(for:)`) that decode renders
    /// to check Apple's size limit, kept so that translation sends these bytes
    /// instead of rendering the same ones again for each iOS recipient (the
    /// payload does not depend on the token). Nil when decode had no iOS
    /// recipient, and for notifications built in code.
    ///
    /// Setting any stored property drops it (`didSet`), so a notification
    /// changed after decode is rendered afresh, never sent stale bytes. Any
    /// property, not only those the payload reads, so the rule holds without
    /// knowing which those are; the worker changes a decoded notification only
    /// after translating it (to re-publish it for a retry), so this costs it
    /// nothing. A new stored property needs the same `didSet`. Not part of
    /// `==` or of the intake JSON.
    var apnsPayload: [UInt8]?

    /// A notification; the newer fields are set as properties after `init`.
    public init(
        schemaVersion: Int = 1, id: UUID, app: String, createdAt: Date, expiresAt: Date? = nil,
        priority: Priority = .high, collapseKey: String? = nil, recipients: [Recipient],
        alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, contentAvailable: Bool = false,
        data: [(key: String, value: JSONValue)] = []
    ) {
        self.init(
            schemaVersion: schemaVersion, id: id, app: app, createdAt: createdAt, expiresAt: expiresAt,
            priority: priority, collapseKey: collapseKey, recipients: recipients, alert: alert, badge: badge,
            sound: sound, contentAvailable: contentAvailable, data: data, userRecipients: [], fcmTargets: [],
            category: nil, threadID: nil, mutableContent: false, interruptionLevel: nil, relevanceScore: nil,
            targetContentID: nil, imageURL: nil, doNotStore: false, apns: APNsOverrides(), fcm: FCMOverrides(),
            campaign: nil, keepsAPNsPayload: false)
    }

    /// Every field at once: what decode builds, so the result is made in place
    /// (set field by field after `init`, the finished value was copied twice).
    /// `keepsAPNsPayload` (decode) renders `apnsPayload` here when there is an
    /// iOS recipient, for the same reason: set after `init`, it cost a copy.
    init(
        schemaVersion: Int, id: UUID, app: String, createdAt: Date, expiresAt: Date?, priority: Priority,
        collapseKey: String?, recipients: [Recipient], alert: Alert?, badge: Int?, sound: Sound?,
        contentAvailable: Bool, data: [(key: String, value: JSONValue)], userRecipients: [String],
        fcmTargets: [FCMTarget], category: String?, threadID: String?, mutableContent: Bool,
        interruptionLevel: InterruptionLevel?, relevanceScore: Double?, targetContentID: String?, imageURL: String?,
        doNotStore: Bool, apns: APNsOverrides, fcm: FCMOverrides, campaign: String?, keepsAPNsPayload: Bool
    ) {
        self.schemaVersion = schemaVersion
        self.id = id
        self.app = app
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.priority = priority
        self.collapseKey = collapseKey
        self.recipients = recipients
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.contentAvailable = contentAvailable
        self.data = data
        self.userRecipients = userRecipients
        self.fcmTargets = fcmTargets
        self.category = category
        self.threadID = threadID
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.targetContentID = targetContentID
        self.imageURL = imageURL
        self.doNotStore = doNotStore
        self.apns = apns
        self.fcm = fcm
        self.campaign = campaign
        if keepsAPNsPayload, recipients.contains(where: { $0.platform == .ios }) {
            // Rendered into a local first: `apnsPayload = payload(for: self)` reads
            // `self` while it writes a field of it, so `self` was copied whole for the call.
            let rendered = APNsTranslator.payload(for: self)
            apnsPayload = rendered
        }
    }

    public static func == (lhs: PushNotification, rhs: PushNotification) -> Bool {
        lhs.schemaVersion == rhs.schemaVersion && lhs.id == rhs.id && lhs.app == rhs.app
            && lhs.createdAt == rhs.createdAt && lhs.expiresAt == rhs.expiresAt
            && lhs.priority == rhs.priority && lhs.collapseKey == rhs.collapseKey
            && lhs.recipients == rhs.recipients && lhs.alert == rhs.alert && lhs.badge == rhs.badge
            && lhs.sound == rhs.sound && lhs.contentAvailable == rhs.contentAvailable
            && JSONValue.object(lhs.data) == JSONValue.object(rhs.data)
            && lhs.userRecipients == rhs.userRecipients && lhs.fcmTargets == rhs.fcmTargets
            && lhs.category == rhs.category && lhs.threadID == rhs.threadID
            && lhs.mutableContent == rhs.mutableContent && lhs.interruptionLevel == rhs.interruptionLevel
            && lhs.relevanceScore == rhs.relevanceScore && lhs.targetContentID == rhs.targetContentID
            && lhs.imageURL == rhs.imageURL && lhs.doNotStore == rhs.doNotStore
            && lhs.apns == rhs.apns && lhs.fcm == rhs.fcm && lhs.campaign == rhs.campaign
    }

    /// Delivery urgency, mapped to `apns-priority` 10/5/1 and FCM `android.priority` HIGH/NORMAL.
    public enum Priority: String, Sendable, CaseIterable {
        case high, normal, low
    }
}

/// The platform of a device token.
public enum Platform: String, Sendable, Hashable, CaseIterable {
    /// Apple devices, through APNs.
    case ios
    /// Android with Google services, through FCM.
    case android
    /// Browsers, through their vendors' Web Push services (RFC 8030).
    case web
    /// Huawei devices (Android without Google services), through Push Kit.
    case huawei

    /// The push service that serves this platform.
    public var provider: Provider {
        switch self {
        case .ios: .apns
        case .android: .fcm
        case .web: .webpush
        case .huawei: .hms
        }
    }
}

/// One addressee of a notification: a device token on a platform.
public struct Recipient: Sendable, Hashable {
    /// The APNs device token (hex), FCM registration token, Push Kit token,
    /// or a browser subscription's endpoint URL (its ledger key).
    public var token: String
    /// The platform the token belongs to.
    public var platform: Platform
    /// A browser subscription's keys (`platform == .web` only).
    public var webKeys: WebPushKeys?
    /// A device-token recipient.
    public init(token: String, platform: Platform) {
        self.token = token
        self.platform = platform
        self.webKeys = nil
    }
    /// A browser's push subscription: its endpoint and keys.
    public init(endpoint: String, keys: WebPushKeys) {
        self.token = endpoint
        self.platform = .web
        self.webKeys = keys
    }
}

/// A non-device FCM target: every device subscribed to a topic, or matching a condition.
public enum FCMTarget: Sendable, Hashable {
    /// `message.topic`, the bare name (no `/topics/` prefix).
    case topic(String)
    /// `message.condition`, e.g. `'news' in topics && 'sport' in topics`.
    case condition(String)
}
