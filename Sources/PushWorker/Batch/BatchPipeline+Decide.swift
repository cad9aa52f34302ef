import Foundation
import PushCore
import PushProviders
import PushKafka

extension BatchPipeline {
    /// Decides one part: what each message becomes (rejections, device
    /// events, notifications), the deliveries of its notifications (user ids
    /// resolved to devices), which of those the ledger already has, and what
    /// sending the rest came to. Also returns the keys the part handled.
    func decide(_ part: ArraySlice<DecodedMessage>, counts: [AppUser: Int], handled: Set<Int>) async throws
        -> (BatchOutcome, Set<DeliveryKey>)
    {
        var outcome = BatchOutcome()
        let sources = sortContent(part, into: &outcome)
        // User ids → valid devices: the devices of those within each message's
        // budget (one query for the whole part; none for a part without user ids).
        let fanOut = UserFanOut(sources.map { ($0.notification.app, $0.notification.userRecipients) }, counts: counts)
        let devices = try await registry.devices(of: fanOut.load)
        // Users without a device fan-out takes: have they only stale ones? (No query when none.)
        let stale = try await registry.staleDeviceCounts(of: Set(sources.flatMap { source in
            source.notification.userRecipients.map { AppUser(app: source.notification.app, userID: $0) }
        }.filter { (counts[$0] ?? 0) == 0 }))
        // The created_at each id's ledger rows are filed under (the first one seen).
        let (ledgerCreatedAt, knownIDs) = try await ledgerTimes(of: sources)
        outcome.idsNewToLedger = Set(sources.map(\.notification.id)).subtracting(knownIDs)
        let now = Date()
        let (made, lookups, seen) = workItems(sources, fanOut: fanOut, devices: devices, counts: counts, stale: stale,
                                              ledgerCreatedAt: ledgerCreatedAt, handled: handled, now: now, into: &outcome)
        var items = made
        try await resolveRegistry(&items, lookups)
        outcome.suppressed += try await dropLedgerOwned(&items, knownIDs: knownIDs, now: now)
        outcome.merge(await sender.send(sendable(items, now: now, into: &outcome)))
        // Cancelled at shutdown: nothing of this part is produced, written or stored.
        if outcome.cancelled { throw CancellationError() }
        retries.schedule(&outcome)
        return (outcome, seen)
    }

    /// Sorts the part's messages: rejections and device events go straight
    /// into `outcome`; notifications become the sources their deliveries share.
    private func sortContent(_ part: ArraySlice<DecodedMessage>, into outcome: inout BatchOutcome) -> [WorkItem.Source] {
        var sources: [WorkItem.Source] = []
        let policy = decoder.policy()
        for entry in part {
            let message = entry.message
            switch entry.content {
            case .rejected(let error): reject(message, error, headers: entry.headers, into: &outcome)
            case .device(let event):
                outcome.deviceUpdates.append(event)
                outcome.deviceOrigins.append(MessageOrigin(message))
            case .notification(let notification, let arrival):
                if outcome.origins[notification.id] == nil { outcome.origins[notification.id] = MessageOrigin(message) }
                sources.append(WorkItem.Source(notification: notification, enqueuedAt: decoder.enqueueTime(of: message, policy),
                                               headers: entry.headers, sourceKey: message.key, arrival: arrival,
                                               gate: campaigns.gate(for: notification.campaign)))
            }
        }
        return sources
    }

    /// One work item per (notification, recipient): direct recipients, then
    /// the devices of user ids, then FCM topics and conditions. A user id
    /// that cannot be sent to gets its own final row (`stale`: users whose
    /// only valid devices are stale); a key seen before in the part or in an
    /// earlier part of the batch is suppressed. Also returns the items whose
    /// token the registry is asked about, and the part's keys.
    private func workItems(_ sources: [WorkItem.Source], fanOut: UserFanOut, devices: [AppUser: [DeviceRegistry.UserDevice]],
                           counts: [AppUser: Int], stale: [AppUser: Int], ledgerCreatedAt: [UUID: Date], handled: Set<Int>, now: Date,
                           into outcome: inout BatchOutcome) -> (items: [WorkItem], lookups: [Int], seen: Set<DeliveryKey>) {
        var items: [WorkItem] = []
        var lookups: [Int] = []  // indexes of direct token recipients the registry is asked about
        var seen = Set<DeliveryKey>()
        seen.reserveCapacity(sources.reduce(0) { $0 + $1.notification.recipients.count })  // no rehash as it grows
        for (index, source) in sources.enumerated() {
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
                        detail: "not sent: with user \(user) (\(min(counts[appUser] ?? 0, UserFanOut.maxDevicesPerUser)) valid devices "
                            + "in app \(app)) the message's user ids would reach more than \(budget) devices; "
                            + "split the users over several messages",
                        createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                    continue
                }
                let userDevices = devices[appUser] ?? []
                if userDevices.isEmpty, let old = stale[appUser], let days = registry.staleAfter.map({ Int($0.components.seconds / 86_400) }) {
                    outcome.deliveries.append(userRecord(
                        source.notification, user: user, reason: "StaleDevicesOnly",
                        detail: "not sent: user \(user) has \(old) valid device\(old == 1 ? "" : "s") in app \(app), none seen or "
                            + "registered again in the last \(days) days (registry.stale_after_days)",
                        createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                } else if userDevices.isEmpty {
                    outcome.deliveries.append(userRecord(source.notification, user: user, reason: "NoValidDevices",
                                                         detail: "no valid devices for user \(user) in app \(app)",
                                                         createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                } else if (counts[appUser] ?? 0) > UserFanOut.maxDevicesPerUser {
                    let limit = UserFanOut.maxDevicesPerUser
                    outcome.deliveries.append(userRecord(
                        source.notification, user: user, reason: "TooManyDevices",
                        detail: "user \(user) has more than \(limit) valid devices in app \(app); "
                            + "sent to the \(limit) most recently registered",
                        createdAt: createdAt, enqueuedAt: source.enqueuedAt, at: now))
                }
                found += userDevices.map { ($0.recipient, nil, $0.environment) }
            }
            for target in source.notification.fcmTargets {
                found.append((Recipient(token: WorkItem.syntheticToken(target), platform: .android), target, nil))
            }
            for index in 0..<(direct.count + found.count) {
                let (recipient, fcmTarget, environment) = index < direct.count ? (direct[index], nil, nil) : found[index - direct.count]
                let key = DeliveryKey(notificationID: id, token: recipient.token, createdAt: createdAt)
                if !handled.isEmpty, handled.contains(BatchParts.handledKey(key)) {
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
        return (items, lookups, seen)
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
    /// device or is known invalid: one query per part for the tokens the
    /// worker's registry cache does not hold.
    private func resolveRegistry(_ items: inout [WorkItem], _ indexes: [Int]) async throws {
        guard !indexes.isEmpty else { return }
        func key(_ item: WorkItem) -> AppToken {
            AppToken(app: item.notification.app, platform: item.recipient.platform, token: item.recipient.token)
        }
        let states = try await registry.tokenStates(Set(indexes.map { key(items[$0]) }))
        guard !states.isEmpty else { return }
        for i in indexes {
            guard let state = states[key(items[i])] else { continue }
            if state.sandbox, items[i].recipient.platform.provider == .apns { items[i].environment = .sandbox }
            items[i].knownInvalid = state.invalid && !probingApps.contains(items[i].notification.app)
        }
    }

    /// Removes the items the ledger says are not this part's to send, and
    /// returns how many. Only an id the ledger has seen can have a row: a new
    /// campaign costs no probe of `deliveries`. A final row is never sent
    /// again. A row waiting on a retry tier belongs to the retry message, a
    /// parked row to the parked message: a copy from the intake topic (a
    /// producer's repeat, or the batch again after a worker died past its
    /// write) is not sent, which would skip the retry's back-off (a 429's
    /// retry-after among it) or the provider's hold and, beside the copy in
    /// flight on another worker, reach the device twice. Only while that copy
    /// can still be coming: past `retryOwnership` after the last attempt (or
    /// `parkOwnership` after it was parked), it is presumed lost (its topic
    /// deleted or past retention), and the intake copy is sent.
    private func dropLedgerOwned(_ items: inout [WorkItem], knownIDs: Set<UUID>, now: Date) async throws -> Int {
        let ledger = try await ledger.ledgerStates(items.map(\.key).filter { knownIDs.contains($0.notificationID) })
        guard !ledger.final.isEmpty || !ledger.retrying.isEmpty || !ledger.parked.isEmpty else { return 0 }
        let retryOwned = now.addingTimeInterval(-retryOwnership.seconds)
        let parkOwned = now.addingTimeInterval(-parkOwnership.seconds)
        let before = items.count
        items.removeAll { item in
            if ledger.final.contains(item.key) { return true }
            guard item.source.arrival.fromIntake else { return false }
            if let last = ledger.retrying[item.key], last > retryOwned { return true }
            if let last = ledger.parked[item.key], last > parkOwned { return true }
            return false
        }
        return before - items.count
    }

    /// The items to send, translated for their provider; what ends without a
    /// send (a cancelled campaign, expired, unknown app, no credentials,
    /// known-invalid token, a translation that refuses) gets its final row in
    /// `outcome` instead.
    private func sendable(_ items: [WorkItem], now: Date, into outcome: inout BatchOutcome) -> [DeliverySender.Send] {
        var sends: [DeliverySender.Send] = []
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
                outcome.deliveries.append(item.record(status: .rejected, reason: error.code, detail: error.message, at: now))
            case .success(let request):
                sends.append((item, request, clients))
            }
        }
        return sends
    }

    /// For each notification id of the part, the `created_at` its ledger rows
    /// are filed under: the first message's with that id, whatever `created_at`
    /// a later message carries (one id is one send per device). Within the
    /// part the first message wins; across batches, `notification_ids` does.
    /// Also the ids the ledger has seen at all (`LedgerStore.LedgerIDs.known`).
    private func ledgerTimes(of sources: [WorkItem.Source]) async throws -> (createdAt: [UUID: Date], known: Set<UUID>) {
        var first: [UUID: Date] = [:]
        first.reserveCapacity(sources.count)
        var differs = false
        for source in sources {
            let id = source.notification.id, createdAt = source.notification.createdAt  // no copy of the notification
            if let seen = first[id] { differs = differs || seen != createdAt } else { first[id] = createdAt }
        }
        let ledger = try await ledger.ledgerIDs(first)
        guard differs || !ledger.createdAt.isEmpty else { return ([:], ledger.known) }
        return (first.merging(ledger.createdAt) { _, stored in stored }, ledger.known)
    }

    /// The final record of what a user id could not be sent to: a `rejected`
    /// row keyed `user:<id>`, platform `none`, so analysts see it. No valid
    /// device for the app (`NoValidDevices`), only stale ones
    /// (`StaleDevicesOnly`), or more than a notification
    /// goes to (`TooManyDevices`: the user's devices past
    /// `UserFanOut.maxDevicesPerUser`, or, past `UserFanOut`'s budget for the
    /// message, the whole user, were not sent to).
    private func userRecord(_ n: PushNotification, user: String, reason: String, detail: String, createdAt: Date,
                            enqueuedAt: Date?, at now: Date) -> DeliveryRecord {
        DeliveryRecord(
            key: DeliveryKey(notificationID: n.id, token: "user:" + user, createdAt: createdAt), app: n.app, platform: nil,
            status: .rejected, attempts: 0, providerStatus: nil, providerReason: reason, providerMessageID: nil,
            detail: detail, enqueuedAt: enqueuedAt, finalAt: now, campaign: n.campaign)
    }

    private enum Precheck {
        case final(DeliveryRecord)
        case send(ProviderRouter.AppClients)
    }

    /// A final outcome reached without sending, or the clients to send with.
    private func precheck(_ item: WorkItem, now: Date) -> Precheck {
        if let stopped = item.stoppedBecause {
            // Its campaign was cancelled: whatever topic the message came from, no request.
            return .final(item.cancelledRecord(stopped, at: now))
        }
        if item.notification.isExpired(at: now) {
            return .final(item.record(status: .expired, reason: "Expired", detail: "expired before it could be sent", at: now))
        }
        guard let clients = router.clients(for: item.notification.app) else {
            return .final(item.record(status: .rejected, reason: "UnknownApp",
                                      detail: "no app \"\(item.notification.app)\" is configured", at: now))
        }
        guard clients.serves(item.recipient.platform) else {
            return .final(item.record(status: .rejected, reason: "PlatformNotConfigured",
                                      detail: "app \"\(item.notification.app)\" has no \(item.recipient.platform.provider.rawValue) credentials",
                                      at: now))
        }
        if item.knownInvalid {
            // Apple and Google both ask senders to stop sending to dead tokens; repeated
            // sends to them are what gets a sender throttled. No request, no attempt.
            return .final(item.record(status: .invalidToken, reason: "KnownInvalidToken",
                                      detail: "the registry has this token as invalid since an earlier answer or unregistration; not sent",
                                      at: now))
        }
        return .send(clients)
    }
}
