import Foundation

/// RFC 3339 timestamps as the intake uses them (`2026-11-21T12:00:00Z`,
/// fractional seconds and offsets allowed), exactly as the intake schema's
/// `timestamp` pattern states them: `T` or `t` between date and time (not a
/// space), seconds 00-59 (no leap second 60, which no `Date` can hold),
/// years 0001-9999, days that exist in the proleptic Gregorian calendar.
///
/// `format(parse(s))` gives back the same instant to the microsecond, and
/// `parse(format(d))` gives back the same `Date` for any `d` that came from
/// `parse`: a notification re-encoded for a retry keeps exactly the
/// `created_at` that keys its ledger rows.
public enum Timestamps {
    /// Parses an RFC 3339 internet date-time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`),
    /// keeping microseconds; finer digits are rounded.
    public static func parse(_ string: String) -> Date? {
        var string = string
        return string.withUTF8 { parse(utf8: $0) }
    }

    /// `parse(_:)` on the string's bytes, read in place.
    private static func parse(utf8 b: UnsafeBufferPointer<UInt8>) -> Date? {
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var v = 0
            for i in at..<(at + count) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var i = 19
        var micros = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var position = 0  // digits read after the point
            var any = false
            var roundUp = false
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                let d = Int(b[i] - 0x30)
                if position < 6 {
                    micros = micros * 10 + d
                } else if position == 6 {
                    roundUp = d >= 5
                }
                position += 1
                any = true
                i += 1
            }
            for _ in min(position, 6)..<6 { micros *= 10 }
            guard any else { return nil }
            if roundUp { micros += 1 }
        }
        var offset = 0
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2),
                  oh < 24, om < 60 else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == b.count else { return nil }
        guard day <= daysInMonth(year, month) else { return nil }
        let seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    /// Formats in UTC with milliseconds, or microseconds when the instant has them.
    /// Total for any `Date`: instants outside years 0000 ... 9999 are clamped
    /// to them (NaN formats as the epoch), never converted with a trap.
    public static func format(_ date: Date) -> String {
        let exact = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let totalMicros: Int64
        if exact.isNaN {
            totalMicros = 0
        } else if exact <= Double(minMicros) {
            totalMicros = minMicros
        } else if exact >= Double(maxMicros) {
            totalMicros = maxMicros
        } else {
            totalMicros = Int64(exactly: exact) ?? 0  // integral and within range: always exact
        }
        var seconds = totalMicros / 1_000_000
        var micros = totalMicros % 1_000_000
        if micros < 0 { micros += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        let fraction = micros % 1000 == 0 ? pad(Int(micros / 1000), 3) : pad(Int(micros), 6)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(Int(rest / 3600), 2)):\(pad(Int(rest % 3600 / 60), 2)):\(pad(Int(rest % 60), 2)).\(fraction)Z"
    }

    /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z in UNIX microseconds: what `format` can spell.
    private static let minMicros: Int64 = -62_167_219_200_000_000
    private static let maxMicros: Int64 = 253_402_300_799_999_999

    // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
