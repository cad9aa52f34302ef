import Foundation

/// RFC 3339 timestamps for log lines, without a shared formatter.
enum RFC3339 {
    /// `2026-11-21T15:14:23.123Z` (UTC, milliseconds).
    static func millisecondsUTC(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var millis = Int(((interval - Double(seconds)) * 1000).rounded(.down))
        if millis >= 1000 { seconds += 1; millis -= 1000 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
            + "T" + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2)
            + "." + pad(millis, 3) + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
