import Foundation

/// How long a provider keeps a notification for a device that is offline:
/// one rule for every provider (schemas/README.md, "How long providers keep
/// a notification").
///
/// - `ttl_seconds: 0` (`doNotStore`): now or never, nothing is stored.
/// - `expires_at`, or `created_at` + `ttl_seconds`: until then.
/// - neither: `defaultLifetimeSeconds` (28 days) after `created_at`.
///
/// Each provider is told in its own field, always (a provider's own default
/// never decides), capped at its own maximum: APNs `apns-expiration` (the
/// instant in UNIX seconds; `0` for now or never), FCM `android.ttl` and, for
/// topic and condition messages, `webpush.headers.TTL` and `apns-expiration`,
/// the Web Push `TTL` header, Push Kit `android.ttl` (at most 15 days; now or
/// never is its shortest cache, 1 s, as Huawei documents no zero TTL).
extension PushNotification {
    /// The lifetime of a notification that gives no expiry: 28 days, the
    /// longest intake admits, and FCM's and Web Push's usual longest storage.
    public static let defaultLifetimeSeconds = Int64(IntakeLimits.maxTTLSeconds)

    /// When providers stop trying to deliver: `expiresAt`, else `createdAt`
    /// + `defaultLifetimeSeconds`; nil for do-not-store (now or never).
    public var providerDeadline: Date? {
        if doNotStore { return nil }
        return expiresAt ?? createdAt.addingTimeInterval(TimeInterval(Self.defaultLifetimeSeconds))
    }

    /// The whole seconds a provider keeps it, counted from `now` (default
    /// `createdAt`): 0 for do-not-store, else the time left until
    /// `providerDeadline`, within 0...`cap`. Total for any dates (clamped
    /// before converting; NaN is 0).
    public func storageSeconds(now: Date?, cap: Int64) -> Int64 {
        guard let deadline = providerDeadline else { return 0 }
        let left = deadline.timeIntervalSince(now ?? createdAt).rounded(.down)
        let seconds = left.isFinite ? max(0, min(Double(cap), left)) : 0
        return Int64(exactly: seconds) ?? 0
    }
}
