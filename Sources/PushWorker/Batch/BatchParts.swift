import Foundation
import PushKafka

/// The rule a batch's parts are sized by: messages are taken in order while
/// their deliveries fit the budget, and always at least one (a message wider
/// than the whole budget goes alone: no message is refused for its width).
struct BudgetWalk {
    let budget: Int
    /// Deliveries of the messages taken so far.
    private(set) var total = 0
    /// Messages taken so far.
    private(set) var count = 0

    init(budget: Int) { self.budget = budget }

    /// Takes the next message, of `weight` deliveries, if it fits; false ends the walk.
    mutating func take(_ weight: Int) -> Bool {
        if count > 0, total + weight > budget { return false }
        total += weight
        count += 1
        return true
    }
}

/// A batch's way through its parts. Messages are decoded only as far as the
/// next part needs (its candidates and one message past them), so a batch of
/// wide messages never holds more than a part decoded. What one part learnt
/// and a later one needs is kept here: the device counts of users still
/// waiting (a user-id campaign's users are counted once, not once for every
/// part they wait through), and the keys handled so far (a repeat in a later
/// part is suppressed, as within one part).
struct BatchParts {
    private let messages: [KafkaMessage]
    private var next: Int
    /// Decoded and not yet handled, in order.
    private(set) var ready: [DecodedMessage] = []
    /// The valid devices of the waiting messages' users counted so far (0 for none).
    private(set) var counted: [AppUser: Int] = [:]
    /// The keys of the parts before, hashed (8 bytes a key, not the key).
    private(set) var handled = Set<Int>()

    init(_ messages: [KafkaMessage]) {
        self.messages = messages
        next = messages.startIndex
    }

    /// Every message has been handled.
    var isDone: Bool { ready.isEmpty && next == messages.endIndex }

    /// How many of `ready` are the next part's candidates: the prefix whose
    /// least deliveries fit `budget`. Decodes what the walk needs first.
    mutating func nextCandidates(budget: Int, decode: (KafkaMessage) -> DecodedMessage) -> Int {
        var walk = BudgetWalk(budget: budget)
        var index = 0
        while true {
            if index == ready.count {
                guard next < messages.endIndex else { break }
                ready.append(decode(messages[next]))
                next += 1
            }
            guard walk.take(ready[index].leastDeliveries) else { break }
            index += 1
        }
        return walk.count
    }

    /// The first `part.taken` ready messages are handled: keeps the device
    /// counts of the users still waiting and, when another part follows, the
    /// keys the part handled.
    mutating func finish(_ part: DecidedPart) {
        ready.removeFirst(part.taken)
        counted = [:]
        if !part.counted.isEmpty {
            for user in ready.lazy.flatMap(\.users) {
                if let count = part.counted[user] { counted[user] = count }
            }
        }
        if !isDone { handled.formUnion(part.handled.lazy.map(Self.handledKey)) }
    }

    /// A delivery key's notification id and token, hashed: what a batch's
    /// later parts check repeats against.
    static func handledKey(_ key: DeliveryKey) -> Int {
        var hasher = Hasher()
        hasher.combine(key.notificationID)
        hasher.combine(key.token)
        return hasher.finalize()
    }
}

/// What deciding one part came to: the outcome of its first `taken`
/// candidates, and the delivery permits it holds for them (given back once
/// that outcome is written).
struct DecidedPart: Sendable {
    var outcome: BatchOutcome
    var taken: Int
    var permits: Int
    /// The valid devices of every user counted for the part (0 for none).
    var counted: [AppUser: Int] = [:]
    /// Every delivery key the part handled.
    var handled: Set<DeliveryKey> = []
}
