import Foundation

/// What translation needs to know about the app besides the notification.
public struct TranslationContext: Sendable, Equatable {
    /// APNs topic: the app's bundle id.
    public var apnsTopic: String?
    /// The Firebase project id of the app's service account.
    public var fcmProjectID: String?
    /// The app's Huawei Push Kit app id.
    public var hmsAppID: String?
    public init(apnsTopic: String?, fcmProjectID: String?, hmsAppID: String? = nil) {
        self.apnsTopic = apnsTopic
        self.fcmProjectID = fcmProjectID
        self.hmsAppID = hmsAppID
    }
}

/// A notification that cannot be sent to one recipient as it stands; the
/// delivery is recorded `rejected` with this reason and never sent.
public struct TranslationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short machine-readable code, e.g. `PayloadTooLarge`, `BadDeviceToken`.
    public var code: String
    public var message: String
    /// Whether the token itself is malformed (so the device should be invalidated).
    public var tokenIsInvalid: Bool
    public init(code: String, message: String, tokenIsInvalid: Bool = false) {
        self.code = code
        self.message = message
        self.tokenIsInvalid = tokenIsInvalid
    }
    public var description: String { "\(code): \(message)" }
}

extension PushNotification {
    /// The exact provider request for one recipient, or why there can be none.
    /// `now` is the reference for the relative TTLs of FCM, Push Kit and Web
    /// Push (default: `createdAt`); APNs uses the absolute expiry and ignores it.
    public func request(for recipient: Recipient, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        switch recipient.platform {
        case .ios: return APNsTranslator.request(for: self, token: recipient.token, context: context)
        case .android: return FCMTranslator.request(for: self, token: recipient.token, context: context, now: now)
        case .web: return WebPushTranslator.request(for: self, recipient: recipient, now: now)
        case .huawei: return HMSTranslator.request(for: self, token: recipient.token, context: context, now: now)
        }
    }

    /// The FCM request for a topic or condition target.
    public func request(for target: FCMTarget, context: TranslationContext, now: Date? = nil) -> Result<ProviderRequest, TranslationError> {
        switch target {
        case .topic(let topic): FCMTranslator.request(for: self, target: .topic(topic), context: context, now: now)
        case .condition(let condition): FCMTranslator.request(for: self, target: .condition(condition), context: context, now: now)
        }
    }

    /// True when `expiresAt` has passed at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }
}

/// Stable identifiers derived from a notification and a device, so a retry or
/// a replay reuses the same `apns-id` and providers/ledger can recognise it.
public enum DeliveryIdentity {
    /// A lowercase RFC 9562 version-8 UUID derived from the notification id and token.
    public static func apnsID(notificationID: UUID, token: String) -> String {
        // Two FNV-1a streams over the UUID bytes then the token.
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        withUnsafeBytes(of: notificationID.uuid) { raw in
            for byte in raw {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        var token = token
        token.withUTF8 { utf8 in
            for byte in utf8 {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        a = UUIDText.splitmix64Finalizer(a)
        b = UUIDText.splitmix64Finalizer(b)
        // Version 8 (byte 6 high nibble) and the RFC variant (byte 8 top bits).
        a = (a & ~(0xF0 << 8)) | (0x80 << 8)
        b = (b & ~(0xC0 << 56)) | (0x80 << 56)
        return UUIDText.lowercase(high: a, low: b)
    }
}
