import PushCore

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
        let high = (UUIDText.splitmix64Finalizer(seedHigh &+ counter) & ~0xF000) | 0x4000
        let low = (UUIDText.splitmix64Finalizer(seedLow &+ counter) & ~(0xC << 60)) | (0x8 << 60)
        return UUIDText.lowercase(high: high, low: low)
    }
}
