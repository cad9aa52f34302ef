import Foundation

/// RFC 3339 timestamps as the intake uses them (`2026-11-21T12:00:00Z`,
/// fractional seconds and offsets allowed).
public enum Timestamps {
    /// Parses an RFC 3339 / ISO 8601 internet date-time.
    public static func parse(_ string: String) -> Date? {
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let plain = Date.ISO8601FormatStyle()
        if let d = try? withFraction.parse(string) { return d }
        if let d = try? plain.parse(string) { return d }
        return nil
    }

    /// Formats with millisecond precision in UTC.
    public static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
