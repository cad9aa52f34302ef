import Foundation
import PushCore

/// A device receipt: the app on the device says it received (`delivered`) or
/// its user opened (`opened`) a notification. Published by product services
/// to `PREFIX.receipts` as described by `schemas/receipt.schema.json`.
public struct Receipt: Sendable, Equatable {
    /// What the device reports.
    public enum Kind: String, Sendable, CaseIterable {
        case delivered, opened
    }

    public var notificationID: UUID
    public var token: String
    public var app: String
    public var platform: Platform
    public var kind: Kind
    /// When it happened on the device.
    public var at: Date

    public init(notificationID: UUID, token: String, app: String, platform: Platform, kind: Kind, at: Date) {
        self.notificationID = notificationID
        self.token = token
        self.app = app
        self.platform = platform
        self.kind = kind
        self.at = at
    }

    /// The receipt's JSON, as a product service publishes it.
    public func json() -> JSONValue {
        .object([
            ("schema_version", .int(1)),
            ("notification_id", .string(notificationID.uuidString.lowercased())),
            ("token", .string(token)),
            ("app", .string(app)),
            ("platform", .string(platform.rawValue)),
            ("kind", .string(kind.rawValue)),
            ("at", .string(Timestamps.format(at))),
        ])
    }
}

/// Why a receipt message was refused (the text goes to the DLQ reason header).
public struct ReceiptError: Error, Equatable, CustomStringConvertible {
    /// The text, e.g. `invalid: token missing or not a string`.
    public var reason: String
    /// The class of problem, with the same codes as intake (`IntakeReason`).
    public var code: IntakeReason
    /// The JSON path of the offending field; `$` for the whole message.
    public var path: String
    /// `reason` and `path` are cut as an intake rejection's are (they can
    /// hold a key the producer chose, of any length).
    public init(_ reason: String, code: IntakeReason = .invalidValue, path: String = "$") {
        self.reason = BoundedText.cut(reason, maxBytes: IntakeError.maxDetailBytes)
        self.code = code
        self.path = BoundedText.cut(path, maxBytes: IntakeError.maxPathBytes)
    }
    public var description: String { reason }
}

extension Receipt {
    static let fields: Set<String> = ["schema_version", "notification_id", "token", "app", "platform", "kind", "at"]

    /// Decodes and validates one message against the receipt schema's rules,
    /// through the intake's parser (size limit, BOM, UTF-8, NUL, numbers):
    /// a receipt the database cannot store must be refused here, or its
    /// batch would be retried forever. `at` must fall in `policy`'s window
    /// (default: 28 days back, 1 hour ahead), so no receipt claims year 0001 or 9999.
    public static func decode(_ bytes: [UInt8], policy: IntakePolicy = IntakePolicy()) -> Result<Receipt, ReceiptError> {
        let json: JSONValue
        switch JSONValue.parseIntakeObject(bytes) {
        case .failure(let error):
            return .failure(ReceiptError("\(error.kind.rawValue): \(error.detail)", code: error.reason, path: error.fieldPath))
        case .success(let object): json = object
        }
        guard let members = json.objectMembers else { return .failure(ReceiptError("invalid: not a JSON object", code: .notObject)) }
        if let extra = members.first(where: { !fields.contains($0.key) }) {
            return .failure(ReceiptError("invalid: unknown field \(extra.key)", code: .unknownField, path: extra.key))
        }
        guard case .int(let version)? = json["schema_version"] else {
            return .failure(ReceiptError("invalid: schema_version missing or not an integer",
                                         code: json["schema_version"] == nil ? .missingField : .wrongType, path: "schema_version"))
        }
        guard version == 1 else {
            return .failure(ReceiptError("unsupported schema_version \(version)", code: .unsupportedSchemaVersion, path: "schema_version"))
        }
        func text(_ key: String, max: Int) -> Result<String, ReceiptError> {
            guard let s = json[key]?.stringValue else {
                return .failure(ReceiptError("invalid: \(key) missing or not a string",
                                             code: json[key] == nil || json[key] == .null ? .missingField : .wrongType, path: key))
            }
            guard !s.isEmpty, s.utf8.count <= max else { return .failure(ReceiptError("invalid: \(key) must be 1…\(max) bytes", path: key)) }
            return .success(s)
        }
        do throws(ReceiptError) {
            let idText = try text("notification_id", max: 36).get()
            guard let id = UUID(uuidString: idText) else {
                return .failure(ReceiptError("invalid: notification_id is not a UUID", path: "notification_id"))
            }
            let token = try text("token", max: IntakeLimits.maxTokenBytes).get()
            let app = try text("app", max: 255).get()
            let platformText = try text("platform", max: 16).get()
            guard let platform = Platform(rawValue: platformText) else {
                return .failure(ReceiptError("invalid: platform must be ios, android, web or huawei", path: "platform"))
            }
            let kindText = try text("kind", max: 16).get()
            guard let kind = Kind(rawValue: kindText) else {
                return .failure(ReceiptError("invalid: kind must be delivered or opened", path: "kind"))
            }
            let atText = try text("at", max: 64).get()
            guard let at = Timestamps.parse(atText) else {
                return .failure(ReceiptError("invalid: at is not an RFC 3339 time", code: .invalidTimestamp, path: "at"))
            }
            guard policy.admits(at) else {
                return .failure(ReceiptError("invalid: at \(Timestamps.format(at)) is outside the accepted window \(policy.windowDescription)",
                                             code: .timestampOutOfWindow, path: "at"))
            }
            return .success(Receipt(notificationID: id, token: token, app: app, platform: platform, kind: kind, at: at))
        } catch {
            return .failure(error)
        }
    }
}
