import Foundation

/// Text encoding of `timestamptz` values, exact to the microsecond (the
/// server's resolution) and independent of Foundation's date formatters.
enum PostgresTimestamp {
    private static let microsPerSecond: Int64 = 1_000_000
    private static let microsPerDay: Int64 = 86_400 * 1_000_000

    /// `2026-11-21T12:00:00.123456+00:00` (UTC). Years before 1 are written with ` BC`.
    static func format(_ date: Date) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        append(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `format(date)`'s UTF-8 bytes to `out` (array literals are built
    /// this way, without a String per element).
    static func append(_ date: Date, to out: inout [UInt8]) {
        let scaled = (date.timeIntervalSince1970 * 1_000_000).rounded()
        // Outside ±290,000 years the value does not fit; the server cannot store it anyway.
        guard scaled.isFinite, abs(scaled) < 9.0e18 else {
            out.append(contentsOf: (scaled < 0 ? "-infinity" : "infinity").utf8)
            return
        }
        let total = Int64(scaled)
        var days = total / microsPerDay
        var rest = total % microsPerDay
        if rest < 0 {
            rest += microsPerDay
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let seconds = rest / microsPerSecond
        let micros = rest % microsPerSecond
        let displayYear = year <= 0 ? 1 - year : year
        digits(displayYear, 4, &out)
        out.append(UInt8(ascii: "-"))
        digits(month, 2, &out)
        out.append(UInt8(ascii: "-"))
        digits(day, 2, &out)
        out.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2, &out)
        out.append(UInt8(ascii: "."))
        digits(micros, 6, &out)
        out.append(contentsOf: "+00:00".utf8)
        if year <= 0 { out.append(contentsOf: " BC".utf8) }
    }

    /// Decimal digits of a non-negative `value`, zero-padded to at least `width`.
    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var scratch: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var v = UInt64(max(0, value))
            var n = 0
            repeat {
                buffer[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
            while n < width {
                buffer[n] = UInt8(ascii: "0")
                n += 1
            }
            while n > 0 {
                n -= 1
                out.append(buffer[n])
            }
        }
    }

    /// Parses the server's `timestamptz` output (`2026-11-21 12:00:00.123456+00`,
    /// any offset, optional fraction, ` BC`, `infinity`). Nil if malformed.
    static func parse(_ text: String) -> Date? {
        switch text {
        case "infinity": return Date.distantFuture
        case "-infinity": return Date.distantPast
        default: break
        }
        var scanner = ByteScanner(Array(text.utf8))
        guard var year = scanner.number(minDigits: 4, maxDigits: 9), scanner.skip("-"),
              let month = scanner.number(exactDigits: 2), scanner.skip("-"),
              let day = scanner.number(exactDigits: 2),
              scanner.skip(" ") || scanner.skip("T"),
              let hour = scanner.number(exactDigits: 2), scanner.skip(":"),
              let minute = scanner.number(exactDigits: 2), scanner.skip(":"),
              let second = scanner.number(exactDigits: 2)
        else { return nil }
        var micros: Int64 = 0
        if scanner.skip(".") {
            guard let digits = scanner.digits(), !digits.isEmpty else { return nil }
            // Keep six digits, round on the seventh.
            for index in 0..<6 {
                micros = micros * 10 + (index < digits.count ? Int64(digits[index]) : 0)
            }
            if digits.count > 6, digits[6] >= 5 { micros += 1 }
        }
        var offsetSeconds: Int64 = 0
        if scanner.skip("Z") {
            offsetSeconds = 0
        } else if let sign = scanner.sign() {
            guard let offsetHours = scanner.number(exactDigits: 2) else { return nil }
            var offsetMinutes: Int64 = 0
            var offsetSecs: Int64 = 0
            if scanner.skip(":") {
                guard let value = scanner.number(exactDigits: 2) else { return nil }
                offsetMinutes = value
                if scanner.skip(":") {
                    guard let value = scanner.number(exactDigits: 2) else { return nil }
                    offsetSecs = value
                }
            }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60 + offsetSecs)
        } else {
            return nil
        }
        if scanner.skip(" BC") { year = 1 - year }
        guard scanner.atEnd, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        let localSeconds = days * 86_400 + hour * 3600 + minute * 60 + second
        let utcMicros = (localSeconds - offsetSeconds) * microsPerSecond + micros
        return Date(timeIntervalSince1970: Double(utcMicros) / 1_000_000)
    }

    /// Proleptic Gregorian (year, month, day) for days since 1970-01-01 (H. Hinnant's algorithm).
    static func civil(fromDays daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let shifted = daysSinceEpoch + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = (adjustedYear >= 0 ? adjustedYear : adjustedYear - 399) / 400
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// A cursor over ASCII bytes for the small parsers in this module.
struct ByteScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// Consumes `literal` if it comes next.
    mutating func skip(_ literal: String) -> Bool {
        let expected = Array(literal.utf8)
        guard bytes.count - index >= expected.count,
              bytes[index..<index + expected.count].elementsEqual(expected)
        else { return false }
        index += expected.count
        return true
    }

    /// Consumes a run of decimal digits and returns their values.
    mutating func digits() -> [UInt8]? {
        var values: [UInt8] = []
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            values.append(bytes[index] - 0x30)
            index += 1
        }
        return values
    }

    mutating func number(exactDigits count: Int) -> Int64? {
        number(minDigits: count, maxDigits: count)
    }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        let start = index
        guard let values = digits(), values.count >= minDigits, values.count <= maxDigits else {
            index = start
            return nil
        }
        return values.reduce(Int64(0)) { $0 * 10 + Int64($1) }
    }

    /// Consumes `+` or `-` and returns 1 or -1.
    mutating func sign() -> Int64? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
