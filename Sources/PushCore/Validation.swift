import Foundation

/// One specific problem with an intake message: where and what.
public struct ValidationIssue: Sendable, Equatable, CustomStringConvertible {
    /// JSON path of the offending field, e.g. `recipients[2].platform`.
    public var path: String
    public var reason: String
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(path): \(reason)" }
}

/// Why an intake message cannot become a `PushNotification`.
public struct IntakeError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Not JSON, or not a JSON object.
        case undecodable
        /// A `schema_version` this build does not understand.
        case unsupportedSchemaVersion = "unsupported_schema_version"
        /// JSON, but fields are missing or wrong.
        case invalid
    }
    public var kind: Kind
    public var issues: [ValidationIssue]
    /// The notification id when it could be read, so the rejection can be recorded against it.
    public var notificationID: UUID?
    /// The app when it could be read.
    public var app: String?

    public init(kind: Kind, issues: [ValidationIssue], notificationID: UUID? = nil, app: String? = nil) {
        self.kind = kind
        self.issues = issues
        self.notificationID = notificationID
        self.app = app
    }

    public var description: String {
        "\(kind.rawValue): " + issues.map(\.description).joined(separator: "; ")
    }
}

/// Limits the intake enforces before any translation.
public enum IntakeLimits {
    public static let maxRecipients = 1000
    public static let maxAppLength = 255
    public static let maxCollapseKeyBytes = 64
    public static let maxMessageBytes = 256 * 1024
    /// FCM: a condition may combine at most five topics.
    public static let maxConditionTopics = 5
}

extension PushNotification {
    /// Every field the envelope knows; anything else is reported as unknown.
    static let envelopeFields = [
        "schema_version", "id", "app", "created_at", "expires_at", "ttl_seconds", "priority",
        "collapse_key", "recipients", "alert", "badge", "sound", "category", "thread_id", "content_available",
        "mutable_content", "interruption_level", "relevance_score", "target_content_id", "image_url", "data",
        "apns", "fcm",
    ]

    /// Decodes and validates one intake message. Every problem found is
    /// reported at once with its field path; nothing here can crash on input.
    public static func decode(_ bytes: [UInt8]) -> Result<PushNotification, IntakeError> {
        guard bytes.count <= IntakeLimits.maxMessageBytes else {
            return .failure(IntakeError(kind: .undecodable, issues: [
                ValidationIssue(path: "$", reason: "message is \(bytes.count) bytes, over the \(IntakeLimits.maxMessageBytes)-byte intake limit"),
            ]))
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            return .failure(IntakeError(kind: .undecodable, issues: [ValidationIssue(path: "$", reason: error.message)]))
        }
        guard case .object = json else {
            return .failure(IntakeError(kind: .undecodable, issues: [ValidationIssue(path: "$", reason: "expected a JSON object")]))
        }
        return decode(json)
    }

    /// Decodes and validates an already-parsed intake object: field by field,
    /// then the rules across fields, then the provider payload limits on the
    /// translated payloads (the APNs payload is kept for translation to send).
    public static func decode(_ json: JSONValue) -> Result<PushNotification, IntakeError> {
        var reader = FieldReader(json: json)

        let version = reader.int("schema_version", required: true)
        if let version, !supportedSchemaVersions.contains(version) {
            return .failure(IntakeError(
                kind: .unsupportedSchemaVersion,
                issues: [ValidationIssue(path: "schema_version", reason: "version \(version) is not supported (supported: \(supportedSchemaVersions.lowerBound)...\(supportedSchemaVersions.upperBound))")],
                notificationID: reader.uuid("id", required: false), app: reader.string("app", required: false)))
        }
        let id = reader.uuid("id", required: true)
        let app = reader.string("app", required: true)
        if let app {
            if app.isEmpty { reader.fail("app", "must not be empty") }
            if app.utf8.count > IntakeLimits.maxAppLength { reader.fail("app", "longer than \(IntakeLimits.maxAppLength) bytes") }
        }
        let createdAt = reader.date("created_at", required: true)
        var expiresAt = reader.date("expires_at", required: false)
        var doNotStore = false
        if let ttl = reader.int("ttl_seconds", required: false) {
            if ttl < 0 {
                reader.fail("ttl_seconds", "must not be negative")
            } else if expiresAt != nil {
                reader.fail("ttl_seconds", "give either ttl_seconds or expires_at, not both")
            } else if ttl == 0 {
                doNotStore = true
            } else if let createdAt {
                expiresAt = createdAt.addingTimeInterval(TimeInterval(ttl))
            }
        }
        if let expiresAt, let createdAt, expiresAt < createdAt {
            reader.fail("expires_at", "is before created_at")
        }
        let priority = reader.oneOf("priority", Priority.self) ?? .high
        let collapseKey = reader.nonEmptyString("collapse_key", maxBytes: IntakeLimits.maxCollapseKeyBytes)
        let targets = reader.recipients()
        let alert = reader.alert()
        let badge = reader.int("badge")
        if let badge, badge < 0 { reader.fail("badge", "must not be negative") }
        let sound = reader.sound()
        let category = reader.nonEmptyString("category")
        let threadID = reader.nonEmptyString("thread_id")
        let contentAvailable = reader.bool("content_available") ?? false
        let mutableContent = reader.bool("mutable_content") ?? false
        let interruptionLevel = reader.oneOf("interruption_level", InterruptionLevel.self)
        let relevanceScore = reader.double("relevance_score", in: 0...1)
        let targetContentID = reader.nonEmptyString("target_content_id")
        let imageURL = reader.url("image_url")
        let data = reader.customData()
        let apns = reader.apnsOverrides()
        let fcm = reader.fcmOverrides()
        reader.rejectUnknown(allowed: envelopeFields)

        let hasContent = !(alert?.isEmpty ?? true) || badge != nil || sound != nil || contentAvailable || !data.isEmpty
            || !apns.aps.isEmpty || (apns.pushType.map { $0 != .alert && $0 != .background } ?? false)
        if !hasContent {
            reader.fail("alert", "a notification needs an alert, a badge, a sound, data or content_available")
        }

        guard reader.issues.isEmpty, let version, let id, let app, let createdAt, let targets else {
            return .failure(IntakeError(kind: .invalid, issues: reader.issues, notificationID: id, app: app))
        }
        let n = PushNotification(
            schemaVersion: version, id: id, app: app, createdAt: createdAt, expiresAt: expiresAt,
            priority: priority, collapseKey: collapseKey, recipients: targets.tokens, alert: alert,
            badge: badge, sound: sound, contentAvailable: contentAvailable, data: data,
            userRecipients: targets.userIDs, fcmTargets: targets.fcm, category: category, threadID: threadID,
            mutableContent: mutableContent, interruptionLevel: interruptionLevel, relevanceScore: relevanceScore,
            targetContentID: targetContentID, imageURL: imageURL, doNotStore: doNotStore, apns: apns, fcm: fcm,
            keepsAPNsPayload: true)
        let issues = n.consistencyIssues() + n.payloadLimitIssues()
        guard issues.isEmpty else {
            return .failure(IntakeError(kind: .invalid, issues: issues, notificationID: id, app: app))
        }
        return .success(n)
    }
}
