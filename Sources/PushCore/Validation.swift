import Foundation

/// One specific problem with an intake message: where, what, and its code.
public struct ValidationIssue: Sendable, Equatable, CustomStringConvertible {
    /// JSON path of the offending field, e.g. `recipients[2].platform`; `$` for the whole message.
    public var path: String
    public var reason: String
    /// The class of problem, as stored in `intake_rejections.kind`.
    public var code: IntakeReason
    public init(path: String, reason: String, code: IntakeReason = .invalidValue) {
        self.path = path
        self.reason = reason
        self.code = code
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

    /// The issue that names the rejection: the first with a specific code
    /// (anything but `invalid_value`), else the first.
    private var leadingIssue: ValidationIssue? {
        issues.first { $0.code != .invalidValue } ?? issues.first
    }

    /// The machine code of the rejection (`intake_rejections.kind`): the leading issue's code.
    public var reason: IntakeReason {
        if let issue = leadingIssue { return issue.code }
        return kind == .unsupportedSchemaVersion ? .unsupportedSchemaVersion : .invalidValue
    }

    /// The JSON path of the leading issue; `$` for the whole message.
    /// Cut to `maxPathBytes`: a path holds keys the producer chose.
    public var fieldPath: String { BoundedText.cut(leadingIssue?.path ?? "$", maxBytes: IntakeError.maxPathBytes) }

    /// At most this many issues are spelled out in `detail`; the rest are counted.
    public static let maxDetailedIssues = 20
    /// `detail` is at most this many UTF-8 bytes (before the count of issues
    /// left out): a message of 20,000 unknown keys or one 200 KB key must not
    /// become a 500 KB rejection reason, log line or dead-letter header.
    public static let maxDetailBytes = 2000
    /// `fieldPath` is at most this many UTF-8 bytes.
    public static let maxPathBytes = 256

    /// The issues, `path: reason`, joined with `; ` and without the kind in
    /// front, so a caller that shows the kind itself formats the message once.
    /// Bounded: the first `maxDetailedIssues`, cut to `maxDetailBytes`,
    /// then `; and N more issues` when some were left out.
    public var detail: String {
        var text = ""
        var shown = 0
        for issue in issues.prefix(IntakeError.maxDetailedIssues) {
            if shown > 0 { text += "; " }
            text += issue.description
            shown += 1
            if text.utf8.count >= IntakeError.maxDetailBytes { break }
        }
        text = BoundedText.cut(text, maxBytes: IntakeError.maxDetailBytes)
        let omitted = issues.count - shown
        if omitted > 0 { text += "; and \(omitted) more issue\(omitted == 1 ? "" : "s")" }
        return text
    }

    public var description: String {
        "\(kind.rawValue): " + detail
    }
}

/// Limits the intake enforces before any translation.
public enum IntakeLimits {
    public static let maxRecipients = 1000
    public static let maxAppLength = 255
    public static let maxCollapseKeyBytes = 64
    /// A device token (and so a ledger and registry key) is at most 2048
    /// bytes, the same as a web subscription's endpoint. PostgreSQL cannot
    /// index a btree entry over 2704 bytes: `deliveries`' key adds 24 bytes to
    /// the token, `devices`' the app (up to 255), and a longer token would be
    /// sent and then refused by the outcome write. Real tokens are under 300.
    public static let maxTokenBytes = 2048
    /// 256 KiB: larger messages are refused (`too_large`) before parsing.
    public static let maxMessageBytes = 256 * 1024
    /// An FCM topic name or condition: `topic:<name>` and `condition:<expression>`
    /// are ledger keys, so they are bounded like a token.
    public static let maxFCMTargetBytes = 1024
    /// FCM: a condition may combine at most five topics.
    public static let maxConditionTopics = 5
    /// 28 days, FCM's longest storage (`android.ttl`): the most `ttl_seconds`
    /// may say, and how far `expires_at` may lie after `created_at`.
    public static let maxTTLSeconds = Int(FCMTranslator.maxTTLSeconds)  // 2,419,200
    /// `badge` (APNs) / `notification_count` (FCM, an int32): 0 ... Int32.max.
    public static let badgeRange: ClosedRange<Int> = 0...Int(Int32.max)
}

extension JSONValue {
    /// The first step of every intake decoder (notifications, device events,
    /// receipts): the size limit, strict parsing (`JSONParser`) and "is an
    /// object". A refused message still yields its `id` and `app` when a
    /// lenient re-parse can read them, so its rejection is recorded against them.
    public static func parseIntakeObject(_ bytes: [UInt8]) -> Result<JSONValue, IntakeError> {
        guard bytes.count <= IntakeLimits.maxMessageBytes else {
            return .failure(IntakeError(kind: .undecodable, issues: [
                ValidationIssue(
                    path: "$", reason: "message is \(bytes.count) bytes, over the \(IntakeLimits.maxMessageBytes)-byte intake limit",
                    code: .tooLarge),
            ]))
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            var rejection = IntakeError(kind: .undecodable, issues: [ValidationIssue(path: error.path, reason: error.message, code: error.reason)])
            if error.reason != .notJSON, error.reason != .tooDeep, error.reason != .byteOrderMark,
               let salvaged = try? JSONParser.parse(bytes, strict: false) {
                rejection.notificationID = salvaged["id"]?.stringValue.flatMap(FieldReader.parseUUID)
                rejection.app = salvaged["app"]?.stringValue.flatMap(storableText)
            }
            return .failure(rejection)
        }
        guard case .object = json else {
            return .failure(IntakeError(kind: .undecodable, issues: [ValidationIssue(path: "$", reason: "expected a JSON object", code: .notObject)]))
        }
        return .success(json)
    }

    /// `text` when PostgreSQL can store it as it is and it is short enough to name an app.
    private static func storableText(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= IntakeLimits.maxAppLength,
              !text.unicodeScalars.contains(where: { $0 == "\u{0}" || $0 == "\u{FFFD}" }) else { return nil }
        return text
    }
}

extension PushNotification {
    /// Every field the envelope knows; anything else is reported as unknown.
    static let envelopeFields = [
        "schema_version", "id", "app", "created_at", "expires_at", "ttl_seconds", "priority",
        "collapse_key", "recipients", "alert", "badge", "sound", "category", "thread_id", "content_available",
        "mutable_content", "interruption_level", "relevance_score", "target_content_id", "image_url", "data",
        "apns", "fcm", "campaign",
    ]

    /// `decode(_:policy:)` against the clock now (`IntakePolicy()`).
    public static func decode(_ bytes: [UInt8]) -> Result<PushNotification, IntakeError> {
        decode(bytes, policy: IntakePolicy())
    }

    /// Decodes and validates one intake message. Every problem found is
    /// reported at once with its field path and `IntakeReason`; nothing here
    /// can crash on input. `policy` sets the window `created_at` must fall in.
    public static func decode(_ bytes: [UInt8], policy: IntakePolicy) -> Result<PushNotification, IntakeError> {
        switch JSONValue.parseIntakeObject(bytes) {
        case .failure(let error): return .failure(error)
        case .success(let json): return decode(json, policy: policy)
        }
    }

    /// `decode(_:policy:)` of a parsed object against the clock now (`IntakePolicy()`).
    public static func decode(_ json: JSONValue) -> Result<PushNotification, IntakeError> {
        decode(json, policy: IntakePolicy())
    }

    /// Decodes and validates an already-parsed intake object: field by field,
    /// then the rules across fields, then the provider payload limits on the
    /// translated payloads (the APNs payload is kept for translation to send).
    /// Its strings are taken as they are: a tree from `JSONValue.parse`
    /// holds no NUL and no invalid UTF-8.
    public static func decode(_ json: JSONValue, policy: IntakePolicy) -> Result<PushNotification, IntakeError> {
        var reader = FieldReader(json: json)

        let version = reader.int("schema_version", required: true)
        if let version, !supportedSchemaVersions.contains(version) {
            return .failure(IntakeError(
                kind: .unsupportedSchemaVersion,
                issues: [ValidationIssue(
                    path: "schema_version",
                    reason: "version \(version) is not supported (supported: \(supportedSchemaVersions.lowerBound)...\(supportedSchemaVersions.upperBound))",
                    code: .unsupportedSchemaVersion)],
                notificationID: reader.uuid("id", required: false), app: reader.string("app", required: false)))
        }
        let id = reader.uuid("id", required: true)
        let app = reader.string("app", required: true)
        if let app {
            if app.isEmpty { reader.fail("app", "must not be empty") }
            if app.utf8.count > IntakeLimits.maxAppLength { reader.fail("app", "longer than \(IntakeLimits.maxAppLength) bytes") }
        }
        let createdAt = reader.date("created_at", required: true)
        if let createdAt, !policy.admits(createdAt) {
            reader.fail("created_at", "\(Timestamps.format(createdAt)) is outside the accepted window \(policy.windowDescription)",
                        .createdAtOutOfWindow)
        }
        var expiresAt = reader.date("expires_at", required: false)
        var doNotStore = false
        if let ttl = reader.int("ttl_seconds", in: 0...IntakeLimits.maxTTLSeconds) {
            if expiresAt != nil {
                reader.fail("ttl_seconds", "give either ttl_seconds or expires_at, not both")
            } else if ttl == 0 {
                doNotStore = true
            } else if let createdAt {
                expiresAt = createdAt.addingTimeInterval(TimeInterval(ttl))
            }
        }
        if let expiresAt, let createdAt {
            if expiresAt < createdAt {
                reader.fail("expires_at", "is before created_at", .expiresAtOutOfWindow)
            } else if expiresAt.timeIntervalSince(createdAt) > TimeInterval(IntakeLimits.maxTTLSeconds) {
                reader.fail("expires_at", "is more than 28 days (\(IntakeLimits.maxTTLSeconds) s, FCM's longest storage) after created_at",
                            .expiresAtOutOfWindow)
            }
        }
        let priority = reader.oneOf("priority", Priority.self) ?? .high
        let collapseKey = reader.headerText("collapse_key", maxBytes: IntakeLimits.maxCollapseKeyBytes)
        let campaign = reader.campaign()
        let targets = reader.recipients()
        let alert = reader.alert()
        let badge = reader.int("badge", in: IntakeLimits.badgeRange)
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
            campaign: campaign, keepsAPNsPayload: true)
        let issues = n.consistencyIssues() + n.payloadLimitIssues()
        guard issues.isEmpty else {
            return .failure(IntakeError(kind: .invalid, issues: issues, notificationID: id, app: app))
        }
        return .success(n)
    }
}
