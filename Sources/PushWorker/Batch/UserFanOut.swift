import Foundation
import PushCore

/// A user of an app, as a notification names it.
struct AppUser: Sendable, Hashable {
    var app: String
    var userID: String
}

/// Which user ids of a batch's messages are sent to. A message may name 1,000
/// user ids and each may have `maxDevicesPerUser` devices: a
/// million deliveries from one message, hundreds of millions in a batch. So
/// a message is sent to at most `maxDevicesPerMessage` devices through its
/// user ids: taken in the message's order, a user whose devices would take it
/// past that is not sent to (nor is any user after it), and gets a
/// `TooManyDevices` row instead. Only the users some message sends to are loaded.
struct UserFanOut {
    /// The most devices one message reaches through its user ids.
    static let maxDevicesPerMessage = 10_000
    /// The most devices a notification to one user id is sent to (the most
    /// recently registered): the registry takes any number per user.
    static let maxDevicesPerUser = 1_000

    /// The users whose devices are loaded, each with how many at most.
    var load: [AppUser: Int] = [:]
    /// Per message (index in the batch), the users left out for the budget.
    var cut: [Int: Set<String>] = [:]
    /// Per message (index in the batch), the devices it is sent to through its user ids,
    /// and through how many of them.
    var planned: [Int: (devices: Int, users: Int)] = [:]

    /// - Parameters:
    ///   - messages: each message's app and user ids, in the batch's order.
    ///   - counts: valid devices per user (absent: none), as `deviceCounts` gives them.
    init(_ messages: [(app: String, users: [String])], counts: [AppUser: Int], budget: Int = maxDevicesPerMessage) {
        for (index, message) in messages.enumerated() where !message.users.isEmpty {
            var used = 0
            var users = 0
            var over = false
            for user in message.users {
                let key = AppUser(app: message.app, userID: user)
                let count = min(counts[key] ?? 0, Self.maxDevicesPerUser)
                guard count > 0 else { continue }  // recorded NoValidDevices, costs nothing
                if !over, used + count <= budget {
                    used += count
                    users += 1
                    load[key] = count
                } else {
                    over = true
                    cut[index, default: []].insert(user)
                }
            }
            if used > 0 { planned[index] = (used, users) }
        }
    }
}
