import Foundation

/// A platform-agnostic notification as product services publish it to
/// `push.notifications` (see `schemas/notification.schema.json`).
public struct PushNotification: Sendable, Equatable {
    /// The intake schema versions this build understands.
    public static let supportedSchemaVersions: ClosedRange<Int> = 1...1

    public var schemaVersion: Int
    /// Producer-assigned id; with the device it keys the delivery ledger.
    public var id: UUID
    /// The app this is for (a key of the worker's app configuration).
    public var app: String
    public var createdAt: Date
    /// Absolute expiry; past it the notification is recorded `expired` and not sent.
    public var expiresAt: Date?
    public var priority: Priority
    public var collapseKey: String?
    public var recipients: [Recipient]
    public var alert: Alert?
    public var badge: Int?
    public var sound: String?
    /// Silent/background notification (APNs `content-available`).
    public var contentAvailable: Bool
    /// Custom key-value data delivered to the app (outside `aps` on APNs, `data` on FCM).
    public var data: [(key: String, value: JSONValue)]

    public init(
        schemaVersion: Int = 1, id: UUID, app: String, createdAt: Date, expiresAt: Date? = nil,
        priority: Priority = .high, collapseKey: String? = nil, recipients: [Recipient],
        alert: Alert? = nil, badge: Int? = nil, sound: String? = nil, contentAvailable: Bool = false,
        data: [(key: String, value: JSONValue)] = []
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
    }

    public static func == (lhs: PushNotification, rhs: PushNotification) -> Bool {
        lhs.schemaVersion == rhs.schemaVersion && lhs.id == rhs.id && lhs.app == rhs.app
            && lhs.createdAt == rhs.createdAt && lhs.expiresAt == rhs.expiresAt
            && lhs.priority == rhs.priority && lhs.collapseKey == rhs.collapseKey
            && lhs.recipients == rhs.recipients && lhs.alert == rhs.alert && lhs.badge == rhs.badge
            && lhs.sound == rhs.sound && lhs.contentAvailable == rhs.contentAvailable
            && JSONValue.object(lhs.data) == JSONValue.object(rhs.data)
    }

    /// Delivery urgency, mapped to `apns-priority` and FCM `android.priority`.
    public enum Priority: String, Sendable, CaseIterable {
        case high, normal, low
    }

    public struct Alert: Sendable, Equatable {
        public var title: String?
        public var body: String?
        public init(title: String? = nil, body: String? = nil) {
            self.title = title
            self.body = body
        }
        var isEmpty: Bool { (title ?? "").isEmpty && (body ?? "").isEmpty }
    }
}

/// The platform of a device token.
public enum Platform: String, Sendable, Hashable, CaseIterable {
    case ios, android

    /// The push service that serves this platform.
    public var provider: Provider {
        switch self {
        case .ios: .apns
        case .android: .fcm
        }
    }
}

/// One addressee of a notification: a device token on a platform.
public struct Recipient: Sendable, Hashable {
    public var token: String
    public var platform: Platform
    public init(token: String, platform: Platform) {
        self.token = token
        self.platform = platform
    }
}
