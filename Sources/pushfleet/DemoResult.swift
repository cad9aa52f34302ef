import PushAnalytics
import Foundation
import PushCore
import PushSimulator
import PushWorker

/// What the demo found in PostgreSQL against what it enqueued.
struct DemoResult {
    var expected: [String: Int]
    var actual: [String: Int]
    var deadTokens: Int
    var invalidatedTokens: Int
    var expectedRejections: Int
    var rejections: [String: Int]
    var missingDeliveries: Int
    var expectedExhausted = 0
    /// Device receipts the demo published (as the apps would) and the receipt times found in PostgreSQL.
    var receiptsPublished: (delivered: Int, opened: Int) = (0, 0)
    var receiptsLanded: (delivered: Int, opened: Int) = (0, 0)
    /// The funnel view (delivery_funnel_hourly) for the demo app.
    var funnel: [FunnelRow] = []
    /// Messages found on push.dlq by kind (`exhausted`, `undecodable`, `invalid`, …).
    var deadLetters: [String: Int] = [:]
    /// Messages produced to the retry topics during the run.
    var retryMessages = 0
    var chaosLog: [String] = []
    var workerExitCodes: [Int32] = []
    var secondsToFinal: Double = 0
    var simulatorStats: SimulatorStats?
    /// Web Push messages the simulator decrypted with the subscriptions' private keys, and how many were accepted.
    var webPushDecrypted = 0
    var expectedWebAccepted = 0
    /// Enqueue → accepted before, during and after the FCM outage, per platform.
    var outageLatencies: [DemoLatency] = []
    /// The demo app's interactive traffic with the bulk backlog draining and alone, and the backlog's own.
    var laneLatencies: [DemoLatency] = []
    /// The bulk backlog's drain rate beside interactive traffic and alone.
    var drain: DemoDrain?
    /// The demo app's iOS traffic alone and beside the refused-key app's.
    var refusedKeyLatencies: [DemoLatency] = []
    var parked = DemoParked()
    /// "app|platform|status" → deliveries.
    var byApp: [String: Int] = [:]
    /// Each worker's share of the fleet-wide quotas, by worker.
    var quotaShares: [String: Double] = [:]
    /// When a steady run's phases happened.
    var timeline: DemoTimeline?

    var passed: Bool {
        expected == actual && missingDeliveries == 0 && invalidatedTokens == deadTokens
            && rejections.values.reduce(0, +) == expectedRejections && workerExitCodes.allSatisfy { $0 == 0 }
            && deadLetters["exhausted", default: 0] == expectedExhausted
            && deadLetters.filter { $0.key != "exhausted" && $0.key != "duplicate" }.values.reduce(0, +) == expectedRejections
            && receiptsLanded == receiptsPublished
            && webPushDecrypted >= expectedWebAccepted
    }

    /// What the simulator accepted beyond what the ledger records accepted:
    /// a notification the provider took twice.
    var acceptedTwice: (apns: Int, fcm: Int)? {
        guard let s = simulatorStats else { return nil }
        func ledger(_ platform: String) -> Int {
            ["accepted", "delivered", "opened"].reduce(0) { $0 + (actual["\(platform)|\($1)"] ?? 0) }
        }
        return (s.apnsAccepted - ledger("ios"), s.fcmAccepted - ledger("android"))
    }

    func printReport(elapsed: Duration) {
        let platforms = Platform.allCases.map(\.rawValue)
        let statuses = DeliveryStatus.allCases.map(\.rawValue).filter { s in
            platforms.contains { expected["\($0)|\(s)"] != nil || actual["\($0)|\(s)"] != nil }
        }
        say("")
        say("Deliveries in PostgreSQL (actual / expected):")
        let header = "status".padding(toLength: 16, withPad: " ", startingAt: 0)
            + platforms.map { $0.padding(toLength: 16, withPad: " ", startingAt: 0) }.joined() + "total"
        say(header)
        say(String(repeating: "-", count: header.count + 8))
        var totals = [Int](repeating: 0, count: platforms.count)
        for status in statuses {
            var line = status.padding(toLength: 16, withPad: " ", startingAt: 0)
            var rowTotal = 0
            for (i, platform) in platforms.enumerated() {
                let a = actual["\(platform)|\(status)"] ?? 0
                let e = expected["\(platform)|\(status)"] ?? 0
                line += "\(a) / \(e)".padding(toLength: 16, withPad: " ", startingAt: 0)
                totals[i] += a
                rowTotal += a
            }
            say(line + "\(rowTotal)")
        }
        say("total".padding(toLength: 16, withPad: " ", startingAt: 0)
              + totals.map { "\($0)".padding(toLength: 16, withPad: " ", startingAt: 0) }.joined() + "\(totals.reduce(0, +))")
        say("")
        say("dead tokens invalidated in devices: \(invalidatedTokens) / \(deadTokens)")
        say("invalid intake messages recorded:   \(rejections.values.reduce(0, +)) / \(expectedRejections) \(rejections.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        say("deliveries missing from the ledger: \(missingDeliveries)")
        say("dead-letter topic push.dlq:        \(deadLetters.values.reduce(0, +)) messages \(deadLetters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) (expected \(expectedExhausted) exhausted + \(expectedRejections) invalid)")
        say("retry topics push.retry.*:         \(retryMessages) messages (both lanes)")
        say("parked topics push.parked*:        \(parked.messages) messages for \(parked.heldDeliveries) held deliveries"
              + (parked.perHeldDelivery.map { String(format: " (%.2f per held delivery, at most %d)", $0, parked.maxPerDelivery) } ?? "")
              + (parked.unreadable > 0 ? " (\(parked.unreadable) messages no longer on the local cluster)" : ""))
        if let twice = acceptedTwice {
            say("accepted twice by the simulator (accepted there − accepted in the ledger): APNs \(twice.apns), FCM \(twice.fcm)")
        }
        say("web pushes decrypted by the simulator with each subscription's private key: \(webPushDecrypted) (accepted: \(expectedWebAccepted))")
        if let s = simulatorStats {
            say("simulator: APNs accepted \(s.apnsAccepted), FCM accepted \(s.fcmAccepted), OAuth tokens issued \(s.tokensIssued), connections \(s.connectionsAccepted)")
        }
        for line in chaosLog { say("chaos: \(line)") }
        if let s = simulatorStats {
            let sends = s.apnsSendsByID.values.reduce(0, +)
            let duplicated = s.apnsSendsByID.values.filter { $0 > 1 }.reduce(0) { $0 + $1 - 1 }
            say("APNs sends: \(sends) for \(s.apnsSendsByID.count) distinct apns-ids (\(duplicated) duplicate sends)")
        }
        say("device receipts published / landed: delivered \(receiptsPublished.delivered) / \(receiptsLanded.delivered), opened \(receiptsPublished.opened) / \(receiptsLanded.opened)")
        say("")
        say("Delivery funnel (view delivery_funnel_hourly; accepted = the provider took it, delivered/opened = the device said so):")
        say(ReportRenderer.funnelTable(funnel), terminator: "")
        printFigures()
        say("")
        say("worker exit codes (workers not killed on purpose): \(workerExitCodes.map(String.init).joined(separator: ", "))")
        say(String(format: "all final in %.1f s after the workers started; demo total %.1f s", secondsToFinal, elapsed.seconds))
        say(passed ? "RESULT: PASS" : "RESULT: FAIL")
    }

    static func counts(_ d: [String: Int]) -> JSONValue { .object(d.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) }) }

    func summaryJSON() -> JSONValue {
        let counts = Self.counts
        let members: [(key: String, value: JSONValue)] = [
            ("passed", .bool(passed)),
            ("expected", counts(expected)),
            ("actual", counts(actual)),
            ("dead_tokens", .int(Int64(deadTokens))),
            ("invalidated_tokens", .int(Int64(invalidatedTokens))),
            ("expected_rejections", .int(Int64(expectedRejections))),
            ("rejections", counts(rejections)),
            ("missing_deliveries", .int(Int64(missingDeliveries))),
            ("dead_letters", counts(deadLetters)),
            ("expected_exhausted", .int(Int64(expectedExhausted))),
            ("worker_exit_codes", .array(workerExitCodes.map { .int(Int64($0)) })),
            ("seconds_to_final", .double(secondsToFinal)),
            ("retry_messages", .int(Int64(retryMessages))),
            ("web_push_decrypted", .int(Int64(webPushDecrypted))),
            ("expected_web_accepted", .int(Int64(expectedWebAccepted))),
            ("simulator_fcm_503", .int(Int64(simulatorStats?.responses.filter { $0.key.hasPrefix("fcm|503") }.values.reduce(0, +) ?? 0))),
            ("simulator_apns_sends", .int(Int64(simulatorStats?.apnsSendsByID.values.reduce(0, +) ?? 0))),
            ("simulator_apns_duplicate_ids", .int(Int64(simulatorStats?.apnsSendsByID.values.filter { $0 > 1 }.count ?? 0))),
            ("simulator_apns_distinct_ids", .int(Int64(simulatorStats?.apnsSendsByID.count ?? 0))),
            ("chaos", .array(chaosLog.map { .string($0) })),
            ("receipts_published", .object([("delivered", .int(Int64(receiptsPublished.delivered))), ("opened", .int(Int64(receiptsPublished.opened)))])),
            ("receipts_landed", .object([("delivered", .int(Int64(receiptsLanded.delivered))), ("opened", .int(Int64(receiptsLanded.opened)))])),
            ("funnel", .array(funnel.map(ReportRenderer.funnelJSON))),
        ]
        return .object(members + figuresJSON())
    }
}
