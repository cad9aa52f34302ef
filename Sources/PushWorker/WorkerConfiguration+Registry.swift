import Foundation

extension WorkerConfiguration {
    /// How the worker consults the device registry for tokens named directly
    /// in a notification (`registry.*`, and `apps.<app>.skip_known_invalid_tokens`).
    public struct Registry: Sendable, Equatable {
        /// `registry.cache_seconds`: how long a worker keeps what the registry
        /// said about a token (dead or alive, APNs environment) before asking
        /// again. 0 asks once per batch. Invalidations and registrations a
        /// worker writes itself drop its own cached entries at once; another
        /// replica's are seen within this time.
        public var cacheTTL: Duration = .seconds(30)
        /// Apps configured with `skip_known_invalid_tokens: false`: their
        /// notifications are sent to tokens the registry has as invalid (to
        /// probe them) instead of being recorded `invalid_token KnownInvalidToken`.
        public var probingApps: Set<String> = []
        /// Entries a worker keeps at most (beyond it the expired go, then all).
        public var cacheCapacity = 200_000

        public init() {}

        mutating func read(_ r: ConfigReader) throws {
            if let s = try r.int("cache_seconds") {
                guard (0...3_600).contains(s) else {
                    throw ConfigurationError(key: "registry.cache_seconds", problem: "must be 0...3600")
                }
                cacheTTL = .seconds(s)
            }
        }
    }
}
