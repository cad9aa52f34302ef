import Foundation
import PushCore
import PushKafka

/// One consumed message, decoded once per batch (a batch may be handled in
/// several parts; see `BatchParts`).
struct DecodedMessage: Sendable {
    enum Content: Sendable {
        case device(DeviceEvent)
        case notification(PushNotification, tier: String?)
        case rejected(IntakeError)
    }

    let message: KafkaMessage
    let headers: RetryHeaders
    let content: Content

    /// The fewest deliveries and rows the message makes: each direct
    /// recipient, FCM target and user id is at least one.
    var leastDeliveries: Int {
        guard case .notification(let n, _) = content else { return 1 }
        return max(1, n.recipients.count + n.fcmTargets.count + n.userRecipients.count)
    }

    /// The user ids the message sends to, with its app.
    var users: [AppUser] {
        guard case .notification(let n, _) = content else { return [] }
        return n.userRecipients.map { AppUser(app: n.app, userID: $0) }
    }

    /// The app and user ids of a notification (none for anything else), as `UserFanOut` plans them.
    var fanOutEntry: (app: String, users: [String]) {
        guard case .notification(let n, _) = content else { return ("", []) }
        return (n.app, n.userRecipients)
    }
}
