import Foundation
import PushCore
import PushKafka
import PushPostgres
import PushSimulator

extension DemoRun {
    /// Steady traffic: the workers, and once their groups have settled (no
    /// rebalance inside a measured phase) a bulk backlog as fast as the
    /// brokers take it, then the interactive traffic in its phases
    /// (`DemoTraffic`), an FCM outage counted from its start.
    func runSteady(rate: Double, batch: DemoBatch, campaign: DemoBatch?, refused: DemoBatch?, all: DemoBatch, since: Date,
                           workers: Int, partitions: Int, fleet: WorkerFleet, cluster: KafkaMockCluster, simulator: PushSimulator,
                           receipts: DemoReceipts, chaos: inout DemoChaos?, timeout: Duration) async throws -> (DemoTimeline, Double) {
        let bootstrap = cluster.bootstrapServers
        let deadline = ContinuousClock.now + timeout
        try fleet.launch(count: workers)
        say("started \(workers) worker processes (logs in \(directory)); waiting for their consumer groups to settle")
        let metrics = DemoWorkerMetrics(directory: directory, logger: logger)
        if !(await metrics.waitUntilSettled(workers: workers, total: partitions, timeout: .seconds(90))) {
            say("  the workers' partitions did not settle within 90 s; publishing anyway")
        }
        if let campaign {
            let started = ContinuousClock.now
            try await DemoTraffic.publishAll(campaign.messages, topic: Self.topics.bulk.intake, bootstrap: bootstrap, logger: logger)
            say("bulk backlog: enqueued \(campaign.messages.count) notifications of \(Self.campaignApp) to \(Self.topics.bulk.intake) in \(format(ContinuousClock.now - started))")
        }
        let traffic = DemoTraffic(rate: rate, interactive: batch.messages, backlog: campaign, backlogApp: Self.campaignApp,
                                  refusedKey: refused?.messages ?? [], topics: Self.topics, bootstrap: bootstrap,
                                  databaseURL: databaseURL, since: since, logger: logger)
        // The outage is counted from the first steady message.
        if faults.fcmOutageSeconds != nil { try simulator.setScenarios(faults.scenarios) }
        say("publishing \(batch.messages.count) messages at \(rate)/s\(faults.fcmOutageSeconds.map { String(format: "; FCM answers 503 from %.0f s to %.0f s", faults.fcmOutageStartSeconds, faults.fcmOutageStartSeconds + $0) } ?? "")")
        let outageStart = faults.fcmOutageSeconds == nil ? nil : faults.fcmOutageStartSeconds
        let publishing = Task { try await traffic.run(outageStart: outageStart, outageSeconds: faults.fcmOutageSeconds, deadline: deadline) }
        let progress: Double
        do {
            progress = try await waitForOutcomes(all, since: since, receiptIDs: batch.notificationIDs, timeout: timeout,
                                                 fleet: fleet, chaos: &chaos, cluster: cluster, receipts: receipts)
        } catch {
            publishing.cancel()
            throw error
        }
        return (try await publishing.value, progress)
    }

    /// The figures of a steady run, from the ledger: latency per phase and
    /// platform (the FCM outage's, the lanes', the refused key's), deliveries by app, the backlog's drain.
    func readFigures(into result: inout DemoResult, timeline: DemoTimeline?, since: Date, campaign: DemoBatch?) async throws {
        let connection = try await PostgresConnection.connect(url: databaseURL, logger: logger)
        defer { connection.close() }
        let end = Date().addingTimeInterval(3600)
        if let interval = timeline?.outage {
            result.outageLatencies = try await DemoFigures.latencies(
                on: connection, app: Self.app, since: since,
                phases: [("before", DateInterval(start: since, end: max(since, interval.start))), ("during", interval),
                         ("after", DateInterval(start: interval.end, end: max(interval.end, end)))],
                byPlatform: true)
        }
        if let timeline, campaign != nil {
            result.laneLatencies = try await DemoFigures.latencies(
                on: connection, app: Self.app, since: since,
                phases: timeline.withBacklog.map { ("with backlog", $0) } + (timeline.afterBacklog.map { [("alone", $0)] } ?? []),
                byPlatform: false)
            result.laneLatencies += try await DemoFigures.latencies(
                on: connection, app: Self.campaignApp, since: since, phases: [("bulk backlog", DateInterval(start: since, end: end))],
                byPlatform: false)
            result.drain = DemoDrain(timeline)
        }
        if let timeline, load.refusedKeyNotifications > 0 {
            result.refusedKeyLatencies = try await DemoFigures.latencies(
                on: connection, app: Self.app, since: since,
                phases: [timeline.withoutRefusedKey.map { ("alone", $0) }, timeline.withRefusedKey.map { ("with refused key", $0) }].compactMap { $0 },
                byPlatform: false, platform: Platform.ios.rawValue)
        }
        let apps = [Self.app] + (campaign == nil ? [] : [Self.campaignApp]) + (load.refusedKeyNotifications > 0 ? [Self.refusedKeyApp] : [])
        result.byApp = try await DemoFigures.byApp(on: connection, apps: apps, since: since)
    }
}
