import Foundation

/// SplitMix64: a tiny deterministic generator, so a failing seed replays exactly.
/// The fuzz tiers (PushCoreTests, PushFleetEndToEndTests) and the property tests use it.
package struct FuzzRandom: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound (bound > 0).
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    package mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// A version-4-shaped UUID drawn from this generator.
    package mutating func uuid() -> UUID {
        var b = (0..<16).map { _ in UInt8(truncatingIfNeeded: next()) }
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    package mutating func hex(_ count: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[below(16)] })
    }
}

/// A hostile variant of a message, and what was done to it (for failure reports).
package struct Mutant {
    package var bytes: [UInt8]
    package var mutation: String

    package init(bytes: [UInt8], mutation: String) {
        self.bytes = bytes
        self.mutation = mutation
    }
}

/// Turns valid JSON messages into hostile ones: byte-level damage, NULs and
/// invalid UTF-8 inside strings and keys, numbers out of every range, deep
/// nesting, duplicate keys, a BOM, timestamps at the ends of the calendar and
/// very long strings. Pure and deterministic for a given generator.
package enum FuzzMutator {
    package static let hostileNumbers = [
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "1e308", "-1e308", "1e400", "-1e400", "1e-400", "-1", "-0", "0", "1.5", "-1.5", "1E+2", "4.9e-324",
        "2147483648", "-2147483649", "123456789012345678901234567890",
    ]
    package static let invalidUTF8: [[UInt8]] = [
        [0xC3, 0x28], [0xFF], [0xFE], [0x80], [0xBF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
        [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82], [0xC3],
    ]
    package static let hostileTimestamps = [
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "2026-13-45T25:61:61Z",
        "2026-02-30T00:00:00Z", "2026-11-21T12:00:00+99:99", "-2026-11-21T12:00:00Z", "2026-11-21T12:00:00.1234567891234Z",
        "1970-01-01T00:00:00Z", "2026-11-21", "",
    ]
    package static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Every mutation kind, by name (a kind may not apply to every input; then it damages bytes instead).
    package static let kinds = [
        "flip", "insert", "delete", "truncate", "nul-escape", "nul-raw", "invalid-utf8", "number", "nest",
        "duplicate-key", "bom", "timestamp", "long-string", "string-to-number", "drop-quote", "stacked",
    ]

    /// One hostile variant of `base`.
    package static func mutate(_ base: [UInt8], rng: inout FuzzRandom) -> Mutant {
        apply(rng.pick(kinds), to: base, rng: &rng)
    }

    package static func apply(_ kind: String, to base: [UInt8], rng: inout FuzzRandom) -> Mutant {
        var bytes = base
        let tokens = JSONTokens(base)
        switch kind {
        case "none":
            return Mutant(bytes: bytes, mutation: "unchanged (control)")
        case "flip":
            guard !bytes.isEmpty else { return Mutant(bytes: [0], mutation: kind) }
            let i = rng.below(bytes.count)
            bytes[i] ^= UInt8(truncatingIfNeeded: rng.below(255) + 1)
            return Mutant(bytes: bytes, mutation: "flip byte \(i)")
        case "insert":
            let i = rng.below(bytes.count + 1)
            bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
            return Mutant(bytes: bytes, mutation: "insert byte at \(i)")
        case "delete":
            guard !bytes.isEmpty else { return Mutant(bytes: bytes, mutation: kind) }
            let i = rng.below(bytes.count)
            bytes.remove(at: i)
            return Mutant(bytes: bytes, mutation: "delete byte \(i)")
        case "truncate":
            let n = rng.below(bytes.count + 1)
            return Mutant(bytes: Array(bytes.prefix(n)), mutation: "truncate to \(n)")
        case "nul-escape", "nul-raw", "invalid-utf8":
            guard let span = rng.pickSpan(tokens.strings) else { return apply("flip", to: base, rng: &rng) }
            let at = span.range.lowerBound + rng.below(span.range.count + 1)
            let insert: [UInt8] = kind == "nul-escape" ? Array("\\u0000".utf8) : kind == "nul-raw" ? [0] : rng.pick(invalidUTF8)
            bytes.insert(contentsOf: insert, at: at)
            return Mutant(bytes: bytes, mutation: "\(kind) \(insert.map { String(format: "%02X", $0) }.joined()) in \(span.isKey ? "key" : "string") at \(at)")
        case "number":
            let number = rng.pick(hostileNumbers)
            guard let span = rng.pickSpan(tokens.numbers) else { return apply("string-to-number", to: base, rng: &rng) }
            bytes.replaceSubrange(span.range, with: Array(number.utf8))
            return Mutant(bytes: bytes, mutation: "number at \(span.range.lowerBound) → \(number)")
        case "string-to-number":
            let number = rng.pick(hostileNumbers)
            guard let span = rng.pickSpan(tokens.strings.filter { !$0.isKey }) else { return apply("flip", to: base, rng: &rng) }
            bytes.replaceSubrange(span.range.lowerBound - 1...span.range.upperBound, with: Array(number.utf8))
            return Mutant(bytes: bytes, mutation: "string at \(span.range.lowerBound) → number \(number)")
        case "nest":
            let depth = 60 + rng.below(40)
            let object = rng.below(2) == 0
            let open = object ? String(repeating: "{\"a\":", count: depth) : String(repeating: "[", count: depth)
            let close = String(repeating: object ? "}" : "]", count: depth)
            let nested = Array((open + "1" + close).utf8)
            if let span = rng.pickSpan(tokens.values) {
                bytes.replaceSubrange(span.range, with: nested)
                return Mutant(bytes: bytes, mutation: "value at \(span.range.lowerBound) → \(depth) levels of \(object ? "objects" : "arrays")")
            }
            return Mutant(bytes: nested, mutation: "\(depth) levels")
        case "duplicate-key":
            guard let open = base.firstIndex(of: UInt8(ascii: "{")), let key = rng.pickSpan(tokens.strings.filter(\.isKey)) else {
                return apply("flip", to: base, rng: &rng)
            }
            let name = Array(base[key.range])
            let value: [UInt8] = rng.pick([Array("1".utf8), Array("\"duplicate\"".utf8), Array("null".utf8), Array("{}".utf8), Array("[]".utf8)])
            bytes.insert(contentsOf: [UInt8(ascii: "\"")] + name + Array("\":".utf8) + value + [UInt8(ascii: ",")], at: open + 1)
            return Mutant(bytes: bytes, mutation: "duplicate key \"\(String(decoding: name, as: UTF8.self))\"")
        case "bom":
            return Mutant(bytes: bom + bytes, mutation: "byte order mark")
        case "timestamp":
            let stamp = rng.pick(hostileTimestamps)
            let stamps = tokens.strings.filter { !$0.isKey && $0.range.count >= 10 && isDateLike(base, at: $0.range.lowerBound) }
            guard let span = rng.pickSpan(stamps) else { return apply("number", to: base, rng: &rng) }
            bytes.replaceSubrange(span.range, with: Array(stamp.utf8))
            return Mutant(bytes: bytes, mutation: "timestamp at \(span.range.lowerBound) → \(stamp)")
        case "long-string":
            // Mostly a few KB; now and then past the 256 KiB message limit (keeps 100,000 mutants within ~30 s in debug).
            let length = rng.below(32) == 0 ? 300_000 : rng.below(8) == 0 ? 70_000 : rng.pick([1_000, 5_000, 20_000])
            let unit = rng.pick(["a", "é", "😀", "\\u00e9", "\\\"", "\\ud83d\\ude00"])
            var long: [UInt8] = []
            while long.count < length { long += Array(unit.utf8) }
            guard let span = rng.pickSpan(tokens.strings) else { return apply("flip", to: base, rng: &rng) }
            bytes.replaceSubrange(span.range, with: long)
            return Mutant(bytes: bytes, mutation: "\(span.isKey ? "key" : "string") at \(span.range.lowerBound) → \(long.count) bytes of \(unit)")
        case "drop-quote":
            guard let span = rng.pickSpan(tokens.strings) else { return apply("flip", to: base, rng: &rng) }
            bytes.remove(at: span.range.upperBound)
            return Mutant(bytes: bytes, mutation: "closing quote at \(span.range.upperBound) removed")
        default:  // stacked
            var current = Mutant(bytes: base, mutation: "")
            var steps: [String] = []
            for _ in 0..<(2 + rng.below(3)) {
                let next = apply(rng.pick(kinds.filter { $0 != "stacked" && $0 != "long-string" }), to: current.bytes, rng: &rng)
                current.bytes = next.bytes
                steps.append(next.mutation)
            }
            return Mutant(bytes: current.bytes, mutation: "stacked: " + steps.joined(separator: "; "))
        }
    }

    /// `count` random bytes, sometimes starting like JSON so they get past a first-byte check.
    package static func randomBytes(count: Int, rng: inout FuzzRandom) -> Mutant {
        var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let prefix = rng.below(3)
        if prefix == 1, !bytes.isEmpty { bytes[0] = UInt8(ascii: "{") }
        if prefix == 2, bytes.count > 1 { bytes.replaceSubrange(0..<2, with: Array("{\"".utf8)) }
        return Mutant(bytes: bytes, mutation: "\(count) random bytes")
    }

    package static func isDateLike(_ bytes: [UInt8], at i: Int) -> Bool {
        guard i + 5 <= bytes.count else { return false }
        return bytes[i..<i + 4].allSatisfy { (0x30...0x39).contains($0) } && bytes[i + 4] == UInt8(ascii: "-")
    }
}

/// Byte ranges of the strings (contents, without quotes), numbers and scalar values of a JSON text.
package struct JSONTokens {
    package struct Span {
        package var range: Range<Int>
        package var isKey = false
    }

    package var strings: [Span] = []
    package var numbers: [Span] = []
    /// Strings (with their quotes) and numbers in value position.
    package var values: [Span] = []

    package init(_ b: [UInt8]) {
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                var j = i + 1
                while j < b.count, b[j] != UInt8(ascii: "\"") { j += b[j] == UInt8(ascii: "\\") ? 2 : 1 }
                guard j < b.count else { return }
                var k = j + 1
                while k < b.count, [0x20, 0x0A, 0x0D, 0x09].contains(b[k]) { k += 1 }
                let isKey = k < b.count && b[k] == UInt8(ascii: ":")
                strings.append(Span(range: (i + 1)..<j, isKey: isKey))
                if !isKey { values.append(Span(range: i..<(j + 1))) }
                i = j + 1
            } else if c == UInt8(ascii: "-") || (0x30...0x39).contains(c) {
                var j = i + 1
                while j < b.count, "0123456789.eE+-".utf8.contains(b[j]) { j += 1 }
                numbers.append(Span(range: i..<j))
                values.append(Span(range: i..<j))
                i = j
            } else {
                i += 1
            }
        }
    }
}

extension FuzzRandom {
    package mutating func pickSpan(_ spans: [JSONTokens.Span]) -> JSONTokens.Span? {
        spans.isEmpty ? nil : spans[below(spans.count)]
    }
}
