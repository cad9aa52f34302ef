import Foundation
import Logging
import PushCore
import PushHTTP
import PushKafka

/// Turns one batch of intake or retry messages into outcomes: decode, ledger
/// check, translate, send (concurrently), classify, and decide retries and
/// dead letters. Writes nothing itself: the caller produces `outgoing`,
/// writes the rest to PostgreSQL, then stores offsets.
struct BatchProcessor: Sendable {
    let router: ProviderRouter
    let store: OutcomeStore
    let topics: TopicNames
    let retryPolicy: RetryPolicy
    let maxInlineAttempts: Int
    let maxConcurrentSends: Int
    let logger: Logger

    /// One recipient of one notification, ready to go.
    struct WorkItem: Sendable {
        var notification: PushNotification
        var recipient: Recipient
        var key: DeliveryKey
        var enqueuedAt: Date?
        /// Retry state carried by the message this came from.
        var headers: RetryHeaders
        var sourceKey: [UInt8]?
    }

    func process(_ messages: [KafkaMessage]) async throws -> BatchOutcome {
        var outcome = BatchOutcome()
        var items: [WorkItem] = []
        var seen = Set<DeliveryKey>()
        for message in messages {
            var headers = RetryHeaders(message: message)
            headers.setOrigin(from: message)
            switch PushNotification.decode(message.value) {
            case .failure(let error):
                reject(message, error, headers: headers, into: &outcome)
            case .success(let notification):
                if !notification.userRecipients.isEmpty || !notification.fcmTargets.isEmpty {
                    // Not handled by this worker yet: dead-lettered with the reason (replayable
                    // once supported), never dropped. Device-token recipients still go out.
                    var unsupported = notification
                    unsupported.recipients = []
                    let what = [notification.userRecipients.isEmpty ? nil : "\(notification.userRecipients.count) user-id recipient(s) (user-id resolution is not implemented yet)",
                                notification.fcmTargets.isEmpty ? nil : "\(notification.fcmTargets.count) FCM topic/condition target(s) (not sent by this worker yet)"]
                        .compactMap { $0 }.joined(separator: "; ")
                    let error = IntakeError(kind: .invalid, issues: [ValidationIssue(path: "recipients", reason: "unsupported: " + what)],
                                            notificationID: notification.id, app: notification.app)
                    reject(KafkaMessage(topic: message.topic, partition: message.partition, offset: message.offset,
                                        key: message.key, value: unsupported.intakeJSON().encoded(), headers: message.headers,
                                        timestamp: message.timestamp),
                           error, headers: headers, into: &outcome)
                }
                for recipient in notification.recipients {
                    let key = DeliveryKey(notificationID: notification.id, token: recipient.token, createdAt: notification.createdAt)
                    if seen.insert(key).inserted {
                        items.append(WorkItem(notification: notification, recipient: recipient, key: key,
                                              enqueuedAt: message.timestamp, headers: headers, sourceKey: message.key))
                    } else {
                        outcome.suppressed += 1
                    }
                }
            }
        }
        let alreadyFinal = try await store.finalKeys(items.map(\.key))
        if !alreadyFinal.isEmpty {
            outcome.suppressed += alreadyFinal.count
            items.removeAll { alreadyFinal.contains($0.key) }
        }
        let now = Date()
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
            switch item.notification.request(for: item.recipient, context: clients.context) {
            case .failure(let error):
                outcome.deliveries.append(record(item, status: .rejected, reason: error.code, detail: error.message, at: now))
            case .success(let request):
                sends.append((item, request, clients))
            }
        }
        outcome.merge(await send(sends))
        scheduleRetries(&outcome)
        return outcome
    }

    /// An intake message that is not a notification: recorded and dead-lettered with the reason.
    private func reject(_ message: KafkaMessage, _ error: IntakeError, headers: RetryHeaders, into outcome: inout BatchOutcome) {
        logger.warning("intake message rejected", metadata: [
            "kafka.topic": "\(message.topic)", "kafka.partition": "\(message.partition)",
            "kafka.offset": "\(message.offset)", "intake.kind": "\(error.kind.rawValue)",
            "push.notification_id": "\(error.notificationID?.uuidString.lowercased() ?? "-")",
            "error": "\(error)",
        ])
        outcome.rejections.append(IntakeRejection(
            notificationID: error.notificationID, app: error.app, kind: error.kind.rawValue,
            reason: error.description, topic: message.topic, partition: message.partition, offset: message.offset))
        var dlq = headers
        dlq.reason = "\(error.kind.rawValue): \(error.description)"
        outcome.outgoing.append(OutgoingMessage(topic: topics.deadLetter, key: message.key, value: message.value, headers: dlq.kafkaHeaders))
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

    /// Sends everything with at most `maxConcurrentSends` requests outstanding.
    private func send(_ sends: [(WorkItem, ProviderRequest, ProviderRouter.AppClients)]) async -> BatchOutcome {
        await withTaskGroup(of: BatchOutcome.self) { group in
            var outcome = BatchOutcome()
            var next = 0
            while next < sends.count && next < maxConcurrentSends {
                let (item, request, clients) = sends[next]
                group.addTask { await self.deliver(item, request, clients) }
                next += 1
            }
            while let one = await group.next() {
                outcome.merge(one)
                if next < sends.count {
                    let (item, request, clients) = sends[next]
                    group.addTask { await self.deliver(item, request, clients) }
                    next += 1
                }
            }
            return outcome
        }
    }
}
