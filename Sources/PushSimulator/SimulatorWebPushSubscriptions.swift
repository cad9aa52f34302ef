import Crypto
import Foundation
import PushCore

/// Push subscriptions the simulator can decrypt for: each subscription id
/// (the last path segment of `/wp/<id>`) determines its key pair and auth
/// secret, so a test or the demo can mint a subscription without telling the
/// simulator, and the simulator can open every message sent to it.
///
/// Private scalar = SHA-256("pushfleet-sim-webpush" || id), or, in the
/// (2^-32-likely) case that is not a valid P-256 scalar, SHA-256 of the same
/// with a counter byte appended, counting up. Auth secret = the first 16 bytes
/// of SHA-256("pushfleet-sim-webpush-auth" || id). These keys are public
/// knowledge: simulator use only.
///
/// Scenario by id prefix: `gone-` → 410, `missing-` → 404, `toolarge-` → 413,
/// `slow-` or `ratelimited-` → 429 with `Retry-After`; any other id is a live subscription.
public enum SimulatorWebPushSubscriptions {
    /// The path prefix of Web Push endpoints.
    public static let pathPrefix = "/wp/"

    /// A subscription as a browser's `PushSubscription.toJSON()` gives it: the
    /// endpoint (`<origin>/wp/<id>`) and base64url `p256dh` / `auth`.
    /// - Parameter origin: the simulator's origin, e.g. `https://127.0.0.1:8443`.
    public static func subscription(
        id: String, origin: String
    ) -> (endpoint: String, p256dh: String, auth: String) {
        let keys = keys(id: id)
        return (
            origin + pathPrefix + id, Base64URL.encode(keys.privateKey.publicKey.x963Representation),
            Base64URL.encode(keys.auth)
        )
    }

    /// The subscription's private key and auth secret.
    static func keys(id: String) -> (privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]) {
        let label = Array("pushfleet-sim-webpush".utf8) + Array(id.utf8)
        var privateKey: P256.KeyAgreement.PrivateKey?
        if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: Array(SHA256.hash(data: label))) {
            privateKey = key
        }
        var counter: UInt8 = 0
        while privateKey == nil {
            // A hash at or above the group order (or zero); the next counter value
            // gives another candidate, and one is valid with overwhelming probability.
            privateKey = try? P256.KeyAgreement.PrivateKey(
                rawRepresentation: Array(SHA256.hash(data: label + [counter])))
            counter &+= 1
        }
        let auth = Array(SHA256.hash(data: Array("pushfleet-sim-webpush-auth".utf8) + Array(id.utf8)).prefix(16))
        // The loop only ends with a key.
        return (privateKey ?? P256.KeyAgreement.PrivateKey(), auth)
    }
}

/// One push message the simulator accepted and decrypted.
public struct SimulatorWebPushDelivery: Sendable, Equatable {
    /// The `<id>` of `/wp/<id>`.
    public var subscriptionID: String
    /// The decrypted bytes: what the service worker would receive.
    public var plaintext: [UInt8]
    /// The `TTL` header.
    public var ttl: Int
    /// The `Urgency` header (`normal` when absent).
    public var urgency: String
    /// The `Topic` header, if any.
    public var topic: String?
    /// The base64url VAPID public key (`k=`) the message was signed with.
    public var vapidKey: String
}

/// Where the simulator records decrypted Web Push messages, for tests and
/// the demo to read back. Pass one in `SimulatorConfiguration.webPushInbox`.
/// Bounded: beyond `capacity` messages only `notRecorded` counts.
public final class SimulatorWebPushInbox: Sendable {
    private struct Storage {
        var deliveries: [SimulatorWebPushDelivery] = []
        var notRecorded = 0
    }

    public let capacity: Int
    private let storage = Locked(Storage())

    public init(capacity: Int = 10_000) {
        self.capacity = max(0, capacity)
    }

    /// Every recorded delivery, in arrival order.
    public var deliveries: [SimulatorWebPushDelivery] { storage.withLock { $0.deliveries } }

    /// Deliveries to one subscription.
    public func deliveries(subscriptionID: String) -> [SimulatorWebPushDelivery] {
        storage.withLock { $0.deliveries.filter { $0.subscriptionID == subscriptionID } }
    }

    /// Accepted messages not kept because the inbox was full.
    public var notRecorded: Int { storage.withLock { $0.notRecorded } }

    func record(_ delivery: SimulatorWebPushDelivery) {
        storage.withLock {
            if $0.deliveries.count < capacity {
                $0.deliveries.append(delivery)
            } else {
                $0.notRecorded += 1
            }
        }
    }
}
