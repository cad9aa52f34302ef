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
}

extension PushNotification {
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

    /// Decodes and validates an already-parsed intake object.
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
        if let ttl = reader.int("ttl_seconds", required: false) {
            if ttl < 0 {
                reader.fail("ttl_seconds", "must not be negative")
            } else if expiresAt != nil {
                reader.fail("ttl_seconds", "give either ttl_seconds or expires_at, not both")
            } else if let createdAt {
                expiresAt = createdAt.addingTimeInterval(TimeInterval(ttl))
            }
        }
        if let expiresAt, let createdAt, expiresAt < createdAt {
            reader.fail("expires_at", "is before created_at")
        }
        var priority = Priority.high
        if let raw = reader.string("priority", required: false) {
            if let p = Priority(rawValue: raw) { priority = p } else {
                reader.fail("priority", "must be one of high, normal, low (got \"\(raw)\")")
            }
        }
        let collapseKey = reader.string("collapse_key", required: false)
        if let collapseKey, collapseKey.utf8.count > IntakeLimits.maxCollapseKeyBytes {
            reader.fail("collapse_key", "longer than \(IntakeLimits.maxCollapseKeyBytes) bytes")
        }
        let recipients = reader.recipients()
        var alert: Alert?
        if let alertJSON = reader.object("alert") {
            var sub = FieldReader(json: alertJSON, prefix: "alert.")
            alert = Alert(title: sub.string("title", required: false), body: sub.string("body", required: false))
            sub.rejectUnknown(allowed: ["title", "body"])
            reader.issues += sub.issues
        }
        let badge = reader.int("badge", required: false)
        if let badge, badge < 0 { reader.fail("badge", "must not be negative") }
        let sound = reader.string("sound", required: false)
        let contentAvailable = reader.bool("content_available") ?? false
        var data: [(key: String, value: JSONValue)] = []
        if let dataJSON = reader.object("data"), case .object(let members) = dataJSON {
            data = members
        }
        if (alert?.isEmpty ?? true) && !contentAvailable && data.isEmpty && badge == nil {
            reader.fail("alert", "a notification needs an alert, a badge, data or content_available")
        }
        reader.rejectUnknown(allowed: [
            "schema_version", "id", "app", "created_at", "expires_at", "ttl_seconds", "priority",
            "collapse_key", "recipients", "alert", "badge", "sound", "content_available", "data",
        ])

        guard reader.issues.isEmpty, let version, let id, let app, let createdAt, let recipients else {
            return .failure(IntakeError(kind: .invalid, issues: reader.issues, notificationID: id, app: app))
        }
        return .success(PushNotification(
            schemaVersion: version, id: id, app: app, createdAt: createdAt, expiresAt: expiresAt,
            priority: priority, collapseKey: collapseKey, recipients: recipients, alert: alert,
            badge: badge, sound: sound, contentAvailable: contentAvailable, data: data))
    }
}

/// Reads typed fields from a JSON object, collecting issues instead of throwing.
struct FieldReader {
    let json: JSONValue
    let prefix: String
    var issues: [ValidationIssue] = []

    init(json: JSONValue, prefix: String = "") {
        self.json = json
        self.prefix = prefix
    }

    mutating func fail(_ field: String, _ reason: String) {
        issues.append(ValidationIssue(path: prefix + field, reason: reason))
    }

    private mutating func value(_ field: String, required: Bool) -> JSONValue? {
        guard let v = json[field], v != .null else {
            if required { fail(field, "is required") }
            return nil
        }
        return v
    }

    mutating func string(_ field: String, required: Bool) -> String? {
        guard let v = value(field, required: required) else { return nil }
        guard case .string(let s) = v else { fail(field, "must be a string"); return nil }
        return s
    }

    mutating func int(_ field: String, required: Bool) -> Int? {
        guard let v = value(field, required: required) else { return nil }
        switch v {
        case .int(let i): return Int(exactly: i)
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: return Int(d)
        default: fail(field, "must be an integer"); return nil
        }
    }

    mutating func bool(_ field: String) -> Bool? {
        guard let v = value(field, required: false) else { return nil }
        guard case .bool(let b) = v else { fail(field, "must be true or false"); return nil }
        return b
    }

    mutating func object(_ field: String) -> JSONValue? {
        guard let v = value(field, required: false) else { return nil }
        guard case .object = v else { fail(field, "must be an object"); return nil }
        return v
    }

    mutating func uuid(_ field: String, required: Bool) -> UUID? {
        guard let s = string(field, required: required) else { return nil }
        guard let u = UUID(uuidString: s) else { fail(field, "is not a UUID (\"\(s.prefix(40))\")"); return nil }
        return u
    }

    mutating func date(_ field: String, required: Bool) -> Date? {
        guard let s = string(field, required: required) else { return nil }
        guard let d = Timestamps.parse(s) else { fail(field, "is not an RFC 3339 timestamp (\"\(s.prefix(40))\")"); return nil }
        return d
    }

    mutating func rejectUnknown(allowed: Set<String>) {
        guard case .object(let members) = json else { return }
        for member in members where !allowed.contains(member.key) {
            fail(member.key, "unknown field")
        }
    }

    mutating func recipients() -> [Recipient]? {
        guard let v = value("recipients", required: true) else { return nil }
        guard case .array(let items) = v else { fail("recipients", "must be an array"); return nil }
        if items.isEmpty { fail("recipients", "must not be empty"); return nil }
        if items.count > IntakeLimits.maxRecipients {
            fail("recipients", "more than \(IntakeLimits.maxRecipients) recipients"); return nil
        }
        var result: [Recipient] = []
        var seen = Set<Recipient>()
        for (i, item) in items.enumerated() {
            var sub = FieldReader(json: item, prefix: "\(prefix)recipients[\(i)].")
            guard case .object = item else { fail("recipients[\(i)]", "must be an object"); continue }
            let token = sub.string("token", required: true)
            let platformRaw = sub.string("platform", required: true)
            sub.rejectUnknown(allowed: ["token", "platform"])
            var platform: Platform?
            if let platformRaw {
                platform = Platform(rawValue: platformRaw)
                if platform == nil { sub.fail("platform", "must be one of ios, android (got \"\(platformRaw)\")") }
            }
            if let token, token.isEmpty { sub.fail("token", "must not be empty") }
            issues += sub.issues
            if let token, !token.isEmpty, let platform {
                let r = Recipient(token: token, platform: platform)
                if seen.insert(r).inserted { result.append(r) }
            }
        }
        return result
    }
}
