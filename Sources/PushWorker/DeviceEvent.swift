import Foundation
import PushCore

/// A device registry message from `PREFIX.devices` (`schemas/device.schema.json`):
/// a product service saying a token was registered for, or unregistered from, an app.
struct DeviceEvent: Sendable, Equatable {
    enum Action: String, Sendable { case register, unregister }

    var app: String
    var platform: Platform
    /// The device token; for a browser, its subscription's endpoint.
    var token: String
    /// A browser subscription's keys (`platform == .web` only).
    var webKeys: WebPushKeys?
    var userID: String?
    var environment: String
    var action: Action
    /// When the app registered (or unregistered) the token: what the APNs 410
    /// timestamp rule compares against.
    var at: Date

    static let supportedSchemaVersions: ClosedRange<Int64> = 1...1

    /// How old an event's `at` may be: 10 years. Far wider than a
    /// notification's 28 days, so a product service can replay its registry
    /// with the original times; years 0001 and 9999 still never pass.
    static let maxAge: TimeInterval = 10 * 365 * 86_400

    /// The default window for `at`: 10 years back, 1 hour ahead (a future
    /// `at` would outrank every APNs 410 to come and keep a dead token valid).
    static func defaultPolicy() -> IntakePolicy { IntakePolicy(maxAge: maxAge) }

    /// Decodes and validates one message; errors use the intake's kinds and
    /// reason codes (the same parser: size limit, BOM, UTF-8, NUL, numbers).
    static func decode(_ bytes: [UInt8], policy: IntakePolicy = defaultPolicy()) -> Result<DeviceEvent, IntakeError> {
        let json: JSONValue
        switch JSONValue.parseIntakeObject(bytes) {
        case .failure(let error): return .failure(IntakeError(kind: error.kind, issues: error.issues, app: error.app))
        case .success(let object): json = object
        }
        switch json["schema_version"] {
        case .int(let version)?:
            guard supportedSchemaVersions.contains(version) else {
                return .failure(IntakeError(kind: .unsupportedSchemaVersion, issues: [ValidationIssue(
                    path: "schema_version", reason: "\(version) is not supported", code: .unsupportedSchemaVersion)]))
            }
        case nil, .null?:
            return .failure(invalid("schema_version", "required integer", .missingField))
        default:
            return .failure(invalid("schema_version", "required integer", .wrongType))
        }
        var issues: [ValidationIssue] = []
        let known: Set<String> = ["schema_version", "app", "platform", "token", "subscription", "user_id", "environment", "action", "at"]
        for (key, _) in json.objectMembers ?? [] where !known.contains(key) {
            issues.append(ValidationIssue(path: key, reason: "unknown property", code: .unknownField))
        }
        func text(_ key: String, max: Int) -> String? {
            let reason = "required non-empty string of at most \(max) bytes"
            switch json[key] {
            case nil, .null?:
                issues.append(ValidationIssue(path: key, reason: reason, code: .missingField))
            case .string(let value)?:
                if !value.isEmpty, value.utf8.count <= max { return value }
                issues.append(ValidationIssue(path: key, reason: reason))
            default:
                issues.append(ValidationIssue(path: key, reason: reason, code: .wrongType))
            }
            return nil
        }
        let app = text("app", max: 255)
        let platform = text("platform", max: 16).flatMap { name -> Platform? in
            guard let p = Platform(rawValue: name) else {
                issues.append(ValidationIssue(path: "platform", reason: "must be ios, android, web or huawei"))
                return nil
            }
            return p
        }
        // A browser registers its PushSubscription (endpoint and keys), every other platform a token.
        var token: String?
        var webKeys: WebPushKeys?
        if platform == .web {
            if json["token"] != nil {
                issues.append(ValidationIssue(path: "token", reason: "a web device gives its subscription, not a token", code: .unknownField))
            }
            switch json["subscription"] {
            case nil, .null?:
                issues.append(ValidationIssue(path: "subscription", reason: "required for platform web: {endpoint, keys: {p256dh, auth}}",
                                              code: .missingField))
            case let subscription?:
                switch Recipient.webSubscription(subscription) {
                case .success(let recipient):
                    token = recipient.token
                    webKeys = recipient.webKeys
                case .failure(let error):
                    issues += error.issues
                }
            }
        } else {
            if json["subscription"] != nil {
                issues.append(ValidationIssue(path: "subscription", reason: "only a web device gives a subscription", code: .unknownField))
            }
            token = text("token", max: IntakeLimits.maxTokenBytes)
            if let given = token, let platform, let problem = Recipient.tokenProblem(given, platform: platform) {
                issues.append(ValidationIssue(path: "token", reason: problem))
                token = nil
            }
        }
        let action = text("action", max: 16).flatMap { name -> Action? in
            guard let a = Action(rawValue: name) else {
                issues.append(ValidationIssue(path: "action", reason: "must be register or unregister"))
                return nil
            }
            return a
        }
        let at = text("at", max: 64).flatMap { value -> Date? in
            guard let d = Timestamps.parse(value) else {
                issues.append(ValidationIssue(path: "at", reason: "must be an RFC 3339 timestamp", code: .invalidTimestamp))
                return nil
            }
            guard policy.admits(d) else {
                issues.append(ValidationIssue(
                    path: "at", reason: "\(Timestamps.format(d)) is outside the accepted window \(policy.windowDescription)",
                    code: .timestampOutOfWindow))
                return nil
            }
            return d
        }
        var userID: String?
        if let raw = json["user_id"], raw != .null {
            userID = raw.stringValue
            if let id = userID, id.isEmpty || id.utf8.count > 255 {
                issues.append(ValidationIssue(path: "user_id", reason: "must be a non-empty string of at most 255 bytes"))
            } else if userID == nil {
                issues.append(ValidationIssue(path: "user_id", reason: "must be a non-empty string", code: .wrongType))
            }
        }
        var environment = "production"
        if let raw = json["environment"] {
            environment = raw.stringValue ?? ""
            if environment != "production" && environment != "sandbox" {
                issues.append(ValidationIssue(path: "environment", reason: "must be production or sandbox"))
            }
        }
        guard issues.isEmpty, let app, let platform, let token, let action, let at else {
            return .failure(IntakeError(kind: .invalid, issues: issues, app: json["app"]?.stringValue))
        }
        return .success(DeviceEvent(app: app, platform: platform, token: token, webKeys: webKeys, userID: userID,
                                    environment: environment, action: action, at: at))
    }

    private static func invalid(_ path: String, _ reason: String, _ code: IntakeReason) -> IntakeError {
        IntakeError(kind: .invalid, issues: [ValidationIssue(path: path, reason: reason, code: code)])
    }
}
