import Foundation

/// A provider's `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP
/// date. Read by the classifier (how long a retry waits) and by the clients'
/// guards (how long an app's sends to that provider pause).
public enum RetryAfter {
    /// The longest wait taken from a server: one hour, six times the longest
    /// retry tier. An answer of `9223372036854775807` or a date in 9999
    /// (broken, or hostile) would otherwise pause an app's sends, or stop its
    /// APNs token minting, until the worker restarts.
    public static let maxSeconds = 3600

    /// The wait `raw` asks for at `now`, at most `maxSeconds`; nil when it is
    /// absent or neither form. A date in the past waits 0 s.
    public static func parse(_ raw: String?, now: Date) -> Duration? {
        guard let raw = raw?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        // Digits only: delta-seconds has no sign, and past Int it is still a (huge) number.
        if raw.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return .seconds(Int(raw).map { min($0, maxSeconds) } ?? maxSeconds)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: raw) else { return nil }
        // Clamped before converting: no date however far away (or NaN) can trap.
        let seconds = date.timeIntervalSince(now).rounded(.up)
        guard seconds > 0 else { return .seconds(0) }
        return .seconds(seconds >= Double(maxSeconds) ? maxSeconds : Int(exactly: seconds) ?? maxSeconds)
    }
}
