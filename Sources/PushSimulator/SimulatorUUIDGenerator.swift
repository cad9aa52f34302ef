/// Lower-case version-4 UUIDs for `apns-id`s APNs makes up, cheaply: a random
/// seed per generator and a counter, mixed (SplitMix64's finaliser, a bijection,
/// so a generator never repeats itself), written straight into the string.
/// They only need to be unique, as Apple's are; `SimulatorRules.newUUID()` stays
/// the reference form. One generator per connection, used on its event loop.
struct SimulatorUUIDGenerator {
    private let seedHigh: UInt64
    private let seedLow: UInt64
    private var counter: UInt64 = 0

    init() {
        var random = SystemRandomNumberGenerator()
        seedHigh = random.next()
        seedLow = random.next()
    }

    /// The next UUID, e.g. `3f2b…-…-4…-8…-…`.
    mutating func next() -> String {
        counter &+= 1
        // Version 4 in the third group, variant 10xx in the fourth, as `UUID()` makes them.
        let high = (Self.mix(seedHigh &+ counter) & ~0xF000) | 0x4000
        let low = (Self.mix(seedLow &+ counter) & ~(0xC << 60)) | (0x8 << 60)
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    buffer[index] = Self.hexDigits[Int((value >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put(high >> 16, nibbles: 4)
            dash()
            put(high, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low, nibbles: 12)
            return index
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
