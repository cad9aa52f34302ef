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
        /// `registry.stale_after_days` (default 30; 0: never): a device not
        /// seen (registered or registered again) for this long is stale, and
        /// user-id fan-out leaves it out. FCM calls a token stale after a
        /// month without its app connecting
        /// (https://firebase.google.com/docs/cloud-messaging/manage-tokens).
        public var staleAfterDays = 30
        /// `registry.remove_after_days` (default 270; 0: never): `pushfleet
        /// maintain` removes a device not seen for this long (and not
        /// invalidated more recently). FCM expires an Android token after 270
        /// days of inactivity.
        public var removeAfterDays = 270

        /// `staleAfterDays` as a duration; nil when devices never go stale.
        public var staleAfter: Duration? { staleAfterDays > 0 ? .seconds(staleAfterDays * 86_400) : nil }

        public init() {}

        mutating func read(_ r: ConfigReader) throws {
            if let s = try r.int("cache_seconds") {
                guard (0...3_600).contains(s) else {
                    throw ConfigurationError(key: "registry.cache_seconds", problem: "must be 0...3600")
                }
                cacheTTL = .seconds(s)
            }
            if let days = try r.int("stale_after_days") {
                guard (0...3_650).contains(days) else {
                    throw ConfigurationError(key: "registry.stale_after_days", problem: "must be 0...3650 (0: never stale)")
                }
                staleAfterDays = days
            }
            if let days = try r.int("remove_after_days") {
                guard (0...3_650).contains(days) else {
                    throw ConfigurationError(key: "registry.remove_after_days", problem: "must be 0...3650 (0: never removed)")
                }
                removeAfterDays = days
            }
            if staleAfterDays > 0, removeAfterDays > 0, removeAfterDays < staleAfterDays {
                throw ConfigurationError(key: "registry.remove_after_days",
                                         problem: "must not be shorter than registry.stale_after_days (\(staleAfterDays))")
            }
        }
    }
}
