import Foundation
import PushCore

/// A device registry message from `PREFIX.devices` (`schemas/device.schema.json`):
/// a product service saying a token was registered for, or unregistered from, an app.
struct DeviceEvent: Sendable, Equatable {
    enum Action: String, Sendable { case register, unregister }

    var app: String
    var platform: Platform
    var token: String
    var userID: String?
    var environment: String
    var action: Action
    /// When the app registered (or unregistered) the token: what the APNs 410
    /// timestamp rule compares against.
    var at: Date

    static let supportedSchemaVersions: ClosedRange<Int64> = 1...1

    /// Decodes and validates one message; errors use the intake's kinds.
    static func decode(_ bytes: [UInt8]) -> Result<DeviceEvent, IntakeError> {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            return .failure(IntakeError(kind: .undecodable, issues: [ValidationIssue(path: "", reason: "not JSON: \(error)")]))
        }
        guard case .object = json else {
            return .failure(IntakeError(kind: .undecodable, issues: [ValidationIssue(path: "", reason: "not a JSON object")]))
        }
        guard case .int(let version)? = json["schema_version"] else {
            return .failure(invalid("schema_version", "required integer"))
        }
        guard supportedSchemaVersions.contains(version) else {
            return .failure(IntakeError(kind: .unsupportedSchemaVersion,
                                        issues: [ValidationIssue(path: "schema_version", reason: "\(version) is not supported")]))
        }
        var issues: [ValidationIssue] = []
        let known: Set<String> = ["schema_version", "app", "platform", "token", "user_id", "environment", "action", "at"]
        for (key, _) in json.objectMembers ?? [] where !known.contains(key) {
            issues.append(ValidationIssue(path: key, reason: "unknown property"))
        }
        func text(_ key: String, max: Int) -> String? {
            guard let value = json[key]?.stringValue, !value.isEmpty, value.utf8.count <= max else {
                issues.append(ValidationIssue(path: key, reason: "required non-empty string of at most \(max) bytes"))
                return nil
            }
            return value
        }
        let app = text("app", max: 255)
        let platform = text("platform", max: 16).flatMap { name -> Platform? in
            guard let p = Platform(rawValue: name) else {
                issues.append(ValidationIssue(path: "platform", reason: "must be ios or android"))
                return nil
            }
            return p
        }
        let token = text("token", max: 4096)
        let action = text("action", max: 16).flatMap { name -> Action? in
            guard let a = Action(rawValue: name) else {
                issues.append(ValidationIssue(path: "action", reason: "must be register or unregister"))
                return nil
            }
            return a
        }
        let at = text("at", max: 64).flatMap { value -> Date? in
            guard let d = Timestamps.parse(value) else {
                issues.append(ValidationIssue(path: "at", reason: "must be an RFC 3339 timestamp"))
                return nil
            }
            return d
        }
        var userID: String?
        if let raw = json["user_id"], raw != .null {
            userID = raw.stringValue
            if userID?.isEmpty ?? true { issues.append(ValidationIssue(path: "user_id", reason: "must be a non-empty string")) }
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
        return .success(DeviceEvent(app: app, platform: platform, token: token, userID: userID,
                                    environment: environment, action: action, at: at))
    }

    private static func invalid(_ path: String, _ reason: String) -> IntakeError {
        IntakeError(kind: .invalid, issues: [ValidationIssue(path: path, reason: reason)])
    }
}
