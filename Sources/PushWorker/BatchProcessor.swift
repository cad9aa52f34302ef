import Foundation
import Logging
import PushCore
import PushThreads
import PushHTTP
import PushKafka
import PushProviders

/// Turns one batch of intake or retry messages into outcomes: decode, ledger
/// check, translate, send (concurrently), classify, and decide retries and
/// dead letters. Writes nothing itself: the caller produces `outgoing`,
/// writes the rest to PostgreSQL, then stores offsets. A class, so each
/// concurrent send captures one reference rather than a copy of every field.
final class BatchProcessor: Sendable {
    let router: ProviderRouter
    let store: OutcomeStore
    let topics: TopicNames
    let retryPolicy: RetryPolicy
    let maxConcurrentSends: Int
    let counters: Locked<WorkerCounters>
    let observer: any WorkerObserver
    let logger: Logger
    /// The `created_at` window intake enforces.
    let intake: WorkerConfiguration.Intake
    /// Apps whose notifications go to tokens the registry has as invalid.
    let probingApps: Set<String>

    init(router: ProviderRouter, store: OutcomeStore, topics: TopicNames, retryPolicy: RetryPolicy, maxConcurrentSends: Int,
         counters: Locked<WorkerCounters>, observer: any WorkerObserver, logger: Logger,
         intake: WorkerConfiguration.Intake = .init(), registry: WorkerConfiguration.Registry = .init()) {
        self.intake = intake
        self.probingApps = registry.probingApps
        self.router = router
        self.store = store
        self.topics = topics
        self.retryPolicy = retryPolicy
        self.maxConcurrentSends = maxConcurrentSends
        self.counters = counters
        self.observer = observer
        self.logger = logger
    }

    /// One recipient of one notification, ready to go. What all recipients of
    /// one message share (the notification, its retry headers, key and enqueue
    /// time) sits in one `Source`, so the item copies made between decode,
    /// send and the records retain one reference instead of every field of a
    /// `PushNotification`.
    struct WorkItem: Sendable {
        /// The message an item came from, shared by all its recipients.
        final class Source: Sendable {
            let notification: PushNotification
            let enqueuedAt: Date?
            /// Retry state carried by the message this came from.
            let headers: RetryHeaders
            /// The message's Kafka key, which its retries and dead letters keep; nil
            /// when it had none or one over `maxSourceKeyBytes`.
            let sourceKey: [UInt8]?
            /// The retry tier the message came from; nil from the intake topic.
            let tier: String?

            init(notification: PushNotification, enqueuedAt: Date?, headers: RetryHeaders, sourceKey: [UInt8]?, tier: String? = nil) {
                self.tier = tier
                self.notification = notification
                self.enqueuedAt = enqueuedAt
                self.headers = headers
                // A producer keys by recipient (a token or endpoint, at most 2,048 bytes). A key
                // near the producer's message.max.bytes would make every retry of the message too
                // big to produce, and its deliveries dead letters on their first transient failure.
                self.sourceKey = sourceKey.flatMap { $0.count <= Self.maxSourceKeyBytes ? $0 : nil }
            }

            /// The longest key a retry or dead letter keeps (a recipient is at most 2,048 bytes).
            static let maxSourceKeyBytes = 4_096
        }

        let source: Source
        /// The device, or for an FCM topic/condition a synthetic key (`topic:<name>`,
        /// `condition:<expression>`) on `android`.
        var recipient: Recipient
        /// Set for an FCM topic or condition target.
        var fcmTarget: FCMTarget? = nil
        var key: DeliveryKey
        /// The APNs environment the device registered in (`devices.environment`),
        /// nil for production or when the registry does not know the token.
        var environment: APNsEnvironment? = nil
        /// A device token named directly in the notification (not found through
        /// a user id, not an FCM topic or condition): checked against the registry.
        var direct = false
        /// The registry has this token as invalid (`devices.invalidated_at`).
        var knownInvalid = false

        // Borrowed, not returned: a getter copied the whole notification (a
        // memcpy and a retain and release of each of its fields) on every
        // `item.notification.app` of the batch's and the sends' checks.
        var notification: PushNotification { _read { yield source.notification } }
        var enqueuedAt: Date? { source.enqueuedAt }
        var headers: RetryHeaders { _read { yield source.headers } }
        var sourceKey: [UInt8]? { source.sourceKey }

        init(source: Source, recipient: Recipient, fcmTarget: FCMTarget? = nil, key: DeliveryKey) {
            self.source = source
            self.recipient = recipient
            self.fcmTarget = fcmTarget
            self.key = key
        }
    }

    /// One consumed message, decoded once per batch (a batch may be handled in
    /// several parts, see `process(_:permits:)`).
    struct Decoded: Sendable {
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
    }

    /// What `process(_:permits:)` did: the outcome of the first `taken`
    /// messages, and the delivery permits it holds for them (given back once
    /// their outcome is written).
    struct Processed: Sendable {
        var outcome: BatchOutcome
        var taken: Int
        var permits: Int
        /// The valid devices of every user counted so far (0 for none), for
        /// the next part: a user-id campaign's candidates are counted once,
        /// not once for every part they wait through.
        var counted: [AppUser: Int] = [:]
        /// Every delivery key the part handled, so a later part of the batch
        /// suppresses a repeat, as one part does (the caller keeps their
        /// `handledKey`s only when a later part follows).
        var handled: Set<DeliveryKey> = []
    }

    /// A delivery key's notification id and token, hashed: what a batch's later
    /// parts check repeats against (8 bytes a key, not the key).
    static func handledKey(_ key: DeliveryKey) -> Int {
        var hasher = Hasher()
        hasher.combine(key.notificationID)
        hasher.combine(key.token)
        return hasher.finalize()
    }

    /// Decodes a batch (tests, tools; the worker decodes a part at a time).
    func decode(_ messages: [KafkaMessage]) -> [Decoded] {
        let policy = intakePolicy()
        return messages.map { decode($0, policy: policy) }
    }

    /// Decodes one message, once, whatever part of its batch handles it.
    func decode(_ message: KafkaMessage, policy: IntakePolicy) -> Decoded {
        var headers = trustedHeaders(of: message)
        headers.setOrigin(from: message)
        if message.topic == topics.devices {
            switch DeviceEvent.decode(message.value) {
            case .failure(let error): return Decoded(message: message, headers: headers, content: .rejected(error))
            case .success(let event): return Decoded(message: message, headers: headers, content: .device(event))
            }
        }
        let tier = topics.retries.first { $0.topic == message.topic }?.tier.name
        switch Self.decode(message.value, policy: policy, retry: tier != nil) {
        case .failure(let error): return Decoded(message: message, headers: headers, content: .rejected(error))
        case .success(let notification):
            return Decoded(message: message, headers: headers, content: .notification(notification, tier: tier))
        }
    }

    /// The whole batch at once, without a delivery bound (tests, tools).
    func process(_ messages: [KafkaMessage]) async throws -> BatchOutcome {
        try await process(decode(messages)[...], permits: nil).outcome
    }

    /// Handles a prefix of `batch` whose deliveries fit in half the permits'
    /// capacity (at least one message), after taking permits for them; the
    /// caller handles the rest in later calls. Without `permits`, all of it.
    /// Nothing is held when it throws.
    func process(_ batch: ArraySlice<Decoded>, permits: DeliveryPermits?, counted: [AppUser: Int] = [:],
                 handled: Set<Int> = []) async throws -> Processed {
        guard !batch.isEmpty else { return Processed(outcome: BatchOutcome(), taken: 0, permits: 0) }
        let budget = permits?.partBudget ?? Int.max
        // Candidates by the least each message makes; their users' device counts then give
        // each message's deliveries, and the part is the prefix that fits.
        var candidates = 0
        var least = 0
        for entry in batch {
            let w = entry.leastDeliveries
            if candidates > 0, least + w > budget { break }
            least += w
            candidates += 1
        }
        let head = batch.prefix(candidates)
        func fanOutList(_ part: ArraySlice<Decoded>) -> [(app: String, users: [String])] {
            part.map { entry in
                guard case .notification(let n, _) = entry.content else { return ("", []) }
                return (n.app, n.userRecipients)
            }
        }
        let users = Set(head.flatMap(\.users))
        var counts = counted
        let uncounted = users.filter { counts[$0] == nil }
        if !uncounted.isEmpty {
            let fresh = try await store.deviceCounts(of: uncounted)
            for user in uncounted { counts[user] = fresh[user] ?? 0 }
        }
        let plan = UserFanOut(fanOutList(head), counts: counts)
        var taken = 0
        var weight = 0
        for (index, entry) in head.enumerated() {
            // A user sent to makes its devices' deliveries; any other user one row.
            let users = plan.planned[index] ?? (0, 0)
            let w = entry.leastDeliveries - users.users + users.devices
            if taken > 0, weight + w > budget { break }
            weight += w
            taken += 1
        }
        let held = try await permits?.acquire(weight) ?? 0
        do {
            let (outcome, keys) = try await process(batch.prefix(taken), counts: counts, handled: handled)
            return Processed(outcome: outcome, taken: taken, permits: held, counted: counts, handled: keys)
        } catch {
            permits?.release(held)
            throw error
        }
    }

    /// Also returns the keys the part handled.
    private func process(_ part: ArraySlice<Decoded>, counts: [AppUser: Int], handled: Set<Int>) async throws
        -> (BatchOutcome, Set<DeliveryKey>)
    {
        var outcome = BatchOutcome()
        var decoded: [WorkItem.Source] = []
        let policy = intakePolicy()
        for entry in part {
            let message = entry.message
            switch entry.content {
            case .rejected(let error): reject(message, error, headers: entry.headers, into: &outcome)
            case .device(let event):
                outcome.deviceUpdates.append(event)
                outcome.deviceOrigins.append(MessageOrigin(message))
            case .notification(let notification, let tier):
                if outcome.origins[notification.id] == nil { outcome.origins[notification.id] = MessageOrigin(message) }
                decoded.append(WorkItem.Source(notification: notification, enqueuedAt: enqueueTime(of: message, policy),
                                               headers: entry.headers, sourceKey: message.key, tier: tier))
            }
        }
        // User ids → valid devices: the devices of those within each message's
        // budget (one query for the whole part; none for a part without user ids).
        let fanOut = UserFanOut(decoded.map { ($0.notification.app, $0.notification.userRecipients) }, counts: counts)
        let devices = try await store.devices(of: fanOut.load)
        // The created_at each id's ledger rows are filed under (the first one seen).
        let (ledgerCreatedAt, knownIDs) = try await ledgerTimes(of: decoded)
        outcome.idsNewToLedger = Set(decoded.map(\.notification.id)).subtracting(knownIDs)
        var items: [WorkItem] = []
        var lookups: [Int] = []  // indexes of direct token recipients the registry is asked about
        var seen = Set<DeliveryKey>()
        seen.reserveCapacity(decoded.reduce(0) { $0 + $1.notification.recipients.count })  // no rehash as it grows
        let now = Date()
        for (index, source) in decoded.enumerated() {
            // Read through `source` (a final class's `let`), not `let n =
            // source.notification`: that copied the whole notification (a
            // retain and a release of each of its fields) once per message.
            let id = source.notification.id
            let createdAt = ledgerCreatedAt[id] ?? source.notification.createdAt
            let direct = source.notification.recipients
            // Devices found through user ids (with the environment the registry
            // said), then FCM topics and conditions; none for most messages.
            var found: [(Recipient, FCMTarget?, String?)] = []
            let cut = fanOut.cut[index] ?? []
            for user in source.notification.userRecipients {
                let app = source.notification.app
                let appUser = AppUser(app: app, userID: user)
                if cut.contains(user) {
                    let budget = UserFanOut.maxDevicesPerMessage
                    outcome.deliveries.append(userRecord(
                        source.notification, user: user, reason: "TooManyDevices",
                        detail: "not sent: with user \(user) (\(min(counts[appUser] ?? 0, OutcomeStore.maxDevicesPerUser)) valid devices "
                            + "in app \(app)) the message's user ids would reach more than \(budget) devices; "
                            + "split the users over several messages",
                        createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                    continue
                }
                let userDevices = devices[appUser] ?? []
                if userDevices.isEmpty {
                    outcome.deliveries.append(userRecord(source.notification, user: user, reason: "NoValidDevices",
                                                         detail: "no valid devices for user \(user) in app \(app)",
                                                         createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                } else if (counts[appUser] ?? 0) > OutcomeStore.maxDevicesPerUser {
                    let limit = OutcomeStore.maxDevicesPerUser
                    outcome.deliveries.append(userRecord(
                        source.notification, user: user, reason: "TooManyDevices",
                        detail: "user \(user) has more than \(limit) valid devices in app \(app); "
                            + "sent to the \(limit) most recently registered",
                        createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                }
                found += userDevices.map { ($0.recipient, nil, $0.environment) }
            }
            for target in source.notification.fcmTargets {
                found.append((Recipient(token: Self.syntheticToken(target), platform: .android), target, nil))
            }
            for index in 0..<(direct.count + found.count) {
                let (recipient, fcmTarget, environment) = index < direct.count ? (direct[index], nil, nil) : found[index - direct.count]
                let key = DeliveryKey(notificationID: id, token: recipient.token, createdAt: createdAt)
                if !handled.isEmpty, handled.contains(Self.handledKey(key)) {
                    outcome.suppressed += 1  // an earlier part of the batch had it
                } else if seen.insert(key).inserted {
                    var item = WorkItem(source: source, recipient: recipient, fcmTarget: fcmTarget, key: key)
                    item.environment = environment == "sandbox" ? .sandbox : nil
                    item.direct = index < direct.count
                    if needsRegistryLookup(item) { lookups.append(items.count) }
                    items.append(item)
                } else {
                    outcome.suppressed += 1
                }
            }
        }
        try await resolveRegistry(&items, lookups)
        // Only an id the ledger has seen can have a row: a new campaign costs no probe of `deliveries`.
        // A final row is never sent again. A row waiting on a retry tier belongs to
        // the retry message: a copy from the intake topic (a producer's repeat, or
        // the batch again after a worker died past its write) is not sent, which
        // would skip the retry's back-off (a 429's retry-after among it) and, beside
        // the retry in flight on another worker, reach the device twice. Only while
        // the retry can still be coming: past `retryOwnership` after the last attempt,
        // the retry message is presumed lost (its topic deleted or past retention),
        // and the intake copy is sent.
        let ledger = try await store.ledgerStates(items.map(\.key).filter { knownIDs.contains($0.notificationID) })
        if !ledger.final.isEmpty || !ledger.retrying.isEmpty {
            let owned = now.addingTimeInterval(-retryPolicy.retryOwnership.seconds)
            let before = items.count
            items.removeAll { item in
                if ledger.final.contains(item.key) { return true }
                guard item.source.tier == nil, let last = ledger.retrying[item.key] else { return false }
                return last > owned
            }
            outcome.suppressed += before - items.count
        }
        var sends: [(WorkItem, ProviderRequest, ProviderRouter.AppClients)] = []
        for item in items {
            let clients: ProviderRouter.AppClients
            switch precheck(item, now: now) {
            case .final(let record):
                outcome.deliveries.append(record)
                continue
            case .send(let c):
                clients = c
            }
            let request = item.fcmTarget.map { item.notification.request(for: $0, context: clients.context) }
                ?? item.notification.request(for: item.recipient, context: clients.context)
            switch request {
            case .failure(let error):
                outcome.deliveries.append(record(item, status: .rejected, reason: error.code, detail: error.message, at: now))
            case .success(let request):
                sends.append((item, request, clients))
            }
        }
        outcome.merge(await send(sends))
        // Cancelled at shutdown: nothing of this batch is produced, written or stored.
        if outcome.cancelled { throw CancellationError() }
        scheduleRetries(&outcome)
        return (outcome, seen)
    }

    /// A device token named directly is checked against the registry: whether
    /// it is known invalid (unless its app probes dead tokens) and, for an app
    /// whose APNs sandbox host differs from production, where it goes.
    private func needsRegistryLookup(_ item: WorkItem) -> Bool {
        guard item.direct else { return false }
        if !probingApps.contains(item.notification.app) { return true }
        return item.recipient.platform.provider == .apns
            && router.clients(for: item.notification.app)?.routesSandboxSeparately == true
    }

    /// Marks the items at `indexes` whose token is registered as a sandbox
    /// device or is known invalid: one query per batch for the tokens the
    /// worker's registry cache does not hold.
    private func resolveRegistry(_ items: inout [WorkItem], _ indexes: [Int]) async throws {
        guard !indexes.isEmpty else { return }
        func key(_ item: WorkItem) -> OutcomeStore.AppToken {
            OutcomeStore.AppToken(app: item.notification.app, platform: item.recipient.platform, token: item.recipient.token)
        }
        let states = try await store.cachedRegistryStates(Set(indexes.map { key(items[$0]) }))
        guard !states.isEmpty else { return }
        for i in indexes {
            guard let state = states[key(items[i])] else { continue }
            if state.sandbox, items[i].recipient.platform.provider == .apns { items[i].environment = .sandbox }
            items[i].knownInvalid = state.invalid && !probingApps.contains(items[i].notification.app)
        }
    }

    /// For each notification id of the batch, the `created_at` its ledger rows
    /// are filed under: the first message's with that id, whatever `created_at`
    /// a later message carries (one id is one send per device). Within the
    /// batch the first message wins; across batches, `notification_ids` does.
    /// Also the ids the ledger has seen at all (`OutcomeStore.LedgerIDs.known`).
    private func ledgerTimes(of sources: [WorkItem.Source]) async throws -> (createdAt: [UUID: Date], known: Set<UUID>) {
        var first: [UUID: Date] = [:]
        first.reserveCapacity(sources.count)
        var differs = false
        for source in sources {
            let id = source.notification.id, createdAt = source.notification.createdAt  // no copy of the notification
            if let seen = first[id] { differs = differs || seen != createdAt } else { first[id] = createdAt }
        }
        let ledger = try await store.ledgerIDs(first)
        guard differs || !ledger.createdAt.isEmpty else { return ([:], ledger.known) }
        return (first.merging(ledger.createdAt) { _, stored in stored }, ledger.known)
    }

    /// The ledger key of an FCM topic or condition target.
    static func syntheticToken(_ target: FCMTarget) -> String {
        switch target {
        case .topic(let name): "topic:" + name
        case .condition(let condition): "condition:" + condition
        }
    }

    /// The final record of what a user id could not be sent to: a `rejected`
    /// row keyed `user:<id>`, platform `none`, so analysts see it. No valid
    /// device for the app (`NoValidDevices`), or more than a notification
    /// goes to (`TooManyDevices`: the user's devices past
    /// `OutcomeStore.maxDevicesPerUser`, or, past `UserFanOut`'s budget for the
    /// message, the whole user, were not sent to).
    private func userRecord(_ n: PushNotification, user: String, reason: String, detail: String, createdAt: Date,
                            enqueuedAt: Date?, at now: Date) -> DeliveryRecord {
        DeliveryRecord(
            key: DeliveryKey(notificationID: n.id, token: "user:" + user, createdAt: createdAt), app: n.app, platform: nil,
            status: .rejected, attempts: 0, providerStatus: nil, providerReason: reason, providerMessageID: nil,
            detail: detail, enqueuedAt: enqueuedAt, finalAt: now)
    }

    private enum Precheck {
        case final(DeliveryRecord)
        case send(ProviderRouter.AppClients)
    }

    /// A final outcome reached without sending, or the clients to send with.
    private func precheck(_ item: WorkItem, now: Date) -> Precheck {
        if item.notification.isExpired(at: now) {
            return .final(record(item, status: .expired, reason: "Expired", detail: "expired before it could be sent", at: now))
        }
        guard let clients = router.clients(for: item.notification.app) else {
            return .final(record(item, status: .rejected, reason: "UnknownApp", detail: "no app \"\(item.notification.app)\" is configured", at: now))
        }
        guard clients.serves(item.recipient.platform) else {
            return .final(record(item, status: .rejected, reason: "PlatformNotConfigured",
                                 detail: "app \"\(item.notification.app)\" has no \(item.recipient.platform.provider.rawValue) credentials", at: now))
        }
        if item.knownInvalid {
            // Apple and Google both ask senders to stop sending to dead tokens; repeated
            // sends to them are what gets a sender throttled. No request, no attempt.
            return .final(record(item, status: .invalidToken, reason: "KnownInvalidToken",
                                 detail: "the registry has this token as invalid since an earlier answer or unregistration; not sent",
                                 at: now))
        }
        return .send(clients)
    }

    func record(_ item: WorkItem, status: DeliveryStatus, reason: String?, detail: String?, at now: Date,
                attempts: Int = 0, providerStatus: Int? = nil, firstAttemptAt: Date? = nil, lastAttemptAt: Date? = nil) -> DeliveryRecord {
        DeliveryRecord(
            key: item.key, app: item.notification.app, platform: item.recipient.platform, status: status,
            attempts: attempts, providerStatus: providerStatus, providerReason: reason, providerMessageID: nil, detail: detail,
            enqueuedAt: item.enqueuedAt, firstAttemptAt: firstAttemptAt, lastAttemptAt: lastAttemptAt,
            finalAt: status.isFinal ? now : nil)
    }

    /// Sends everything with at most `maxConcurrentSends` requests outstanding,
    /// on the send executor: the answers resume their sends, and the sends'
    /// ends this batch, without a hop through the global pool each.
    private func send(_ sends: [(WorkItem, ProviderRequest, ProviderRouter.AppClients)]) async -> BatchOutcome {
        await withTaskExecutorPreference(SerialTaskExecutor.sends) { await sendAll(sends) }
    }

    private func sendAll(_ sends: [(WorkItem, ProviderRequest, ProviderRouter.AppClients)]) async -> BatchOutcome {
        await withTaskGroup(of: BatchOutcome.self) { group in
            var outcome = BatchOutcome()
            var next = 0
            func launch(_ index: Int) {
                let (item, request, clients) = sends[index]
                // Web Push seals each message (ECDH, HKDF, AES-GCM) before it goes:
                // CPU work for the whole pool, not for the send executor's one thread.
                group.addTask(spreadingToGlobalPool: request.provider == .webpush) {
                    await self.deliver(item, request, clients)
                }
            }
            while next < sends.count && next < maxConcurrentSends {
                launch(next)
                next += 1
            }
            while let one = await group.next() {
                outcome.merge(one)
                if next < sends.count {
                    launch(next)
                    next += 1
                }
            }
            return outcome
        }
    }
}
