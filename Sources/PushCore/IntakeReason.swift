import Foundation

/// Why a message on an intake topic was refused, as a stable machine code:
/// the raw value is what lands in `intake_rejections.kind`, the DLQ reason
/// header and the table in docs/bad-input.md, so a code is never renamed
/// once shipped.
///
/// A struct wrapping the raw text rather than an enum, so a code added later
/// (or read back from the database) never breaks a `switch` elsewhere.
public struct IntakeReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Not JSON (syntax error, truncated, trailing data, control character in a string).
    public static let notJSON = IntakeReason(rawValue: "not_json")
    /// JSON, but the document is not an object.
    public static let notObject = IntakeReason(rawValue: "not_object")
    /// Over the 256 KiB intake limit (`IntakeLimits.maxMessageBytes`).
    public static let tooLarge = IntakeReason(rawValue: "too_large")
    /// Objects and arrays nested deeper than 64 levels.
    public static let tooDeep = IntakeReason(rawValue: "too_deep")
    /// The same key twice in one object.
    public static let duplicateKey = IntakeReason(rawValue: "duplicate_key")
    /// Starts with a byte order mark (UTF-8 `EF BB BF`, or UTF-16's): RFC 8259 lets a parser ignore it; we refuse it.
    public static let byteOrderMark = IntakeReason(rawValue: "byte_order_mark")
    /// A string or key is not valid UTF-8 (or escapes a lone UTF-16 surrogate).
    public static let invalidUTF8 = IntakeReason(rawValue: "invalid_utf8")
    /// A string or key holds U+0000 (PostgreSQL text cannot store it).
    public static let nulCharacter = IntakeReason(rawValue: "nul_character")
    /// A number outside what its field can mean (or outside a double's range at all).
    public static let numberOutOfRange = IntakeReason(rawValue: "number_out_of_range")
    /// `created_at` outside the window around the worker's clock (`IntakePolicy`).
    public static let createdAtOutOfWindow = IntakeReason(rawValue: "created_at_out_of_window")
    /// A device event's or receipt's `at` outside the window around the worker's clock.
    public static let timestampOutOfWindow = IntakeReason(rawValue: "timestamp_out_of_window")
    /// `expires_at` (or `created_at` + `ttl_seconds`) before `created_at` or more than 28 days after it.
    public static let expiresAtOutOfWindow = IntakeReason(rawValue: "expires_at_out_of_window")
    /// A timestamp that is not RFC 3339.
    public static let invalidTimestamp = IntakeReason(rawValue: "invalid_timestamp")
    /// A `schema_version` this build does not understand.
    public static let unsupportedSchemaVersion = IntakeReason(rawValue: "unsupported_schema_version")
    /// A required field is absent (or null).
    public static let missingField = IntakeReason(rawValue: "missing_field")
    /// A field has the wrong JSON type.
    public static let wrongType = IntakeReason(rawValue: "wrong_type")
    /// A field the schema does not define.
    public static let unknownField = IntakeReason(rawValue: "unknown_field")
    /// A provider payload limit (APNs 4096/5120, FCM 4096/2048 bytes) exceeded after translation.
    public static let payloadTooLarge = IntakeReason(rawValue: "payload_too_large")
    /// `campaign` is empty, longer than `Campaign.maxBytes` UTF-8 bytes, or holds a control character.
    public static let invalidCampaign = IntakeReason(rawValue: "invalid_campaign")
    /// Any other rule a field or a combination of fields breaks.
    public static let invalidValue = IntakeReason(rawValue: "invalid_value")

    /// Every code PushCore and the worker's decoders produce, for documentation and tests.
    public static let allKnown: [IntakeReason] = [
        .notJSON, .notObject, .tooLarge, .tooDeep, .duplicateKey, .byteOrderMark, .invalidUTF8, .nulCharacter,
        .numberOutOfRange, .createdAtOutOfWindow, .timestampOutOfWindow, .expiresAtOutOfWindow, .invalidTimestamp, .unsupportedSchemaVersion,
        .missingField, .wrongType, .unknownField, .payloadTooLarge, .invalidCampaign, .invalidValue,
    ]
}

/// What decode measures `created_at` against: a window around the worker's
/// clock. Injected, so validation stays a pure function of bytes and policy.
public struct IntakePolicy: Sendable, Equatable {
    /// The worker's clock at decode.
    public var now: Date
    /// How old `created_at` may be: 28 days (2,419,200 s, FCM's longest storage) by default.
    public var maxAge: TimeInterval
    /// How far in the future `created_at` may be (producer clock skew): 1 hour by default.
    public var maxFuture: TimeInterval

    public init(now: Date = Date(), maxAge: TimeInterval = 2_419_200, maxFuture: TimeInterval = 3_600) {
        self.now = now
        self.maxAge = maxAge
        self.maxFuture = maxFuture
    }

    /// Whether `date` is within `[now - maxAge, now + maxFuture]` (NaN bounds admit nothing).
    public func admits(_ date: Date) -> Bool {
        let t = date.timeIntervalSince1970, reference = now.timeIntervalSince1970
        return t >= reference - maxAge && t <= reference + maxFuture
    }

    /// The window in words (`earliest ... latest`, RFC 3339), for a rejection reason.
    public var windowDescription: String {
        let earliest = Date(timeIntervalSince1970: now.timeIntervalSince1970 - maxAge)
        let latest = Date(timeIntervalSince1970: now.timeIntervalSince1970 + maxFuture)
        return "\(Timestamps.format(earliest)) ... \(Timestamps.format(latest))"
    }
}
