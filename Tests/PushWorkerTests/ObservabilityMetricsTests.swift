import Metrics
import PushCore
import PushKafka
import PushProviders
import XCTest

@testable import PushWorker

/// `WorkerMetrics` through swift-metrics into a real swift-prometheus
/// registry, checked on the rendered text format.
final class ObservabilityMetricsTests: XCTestCase {
    private var exposition: PrometheusExposition!
    private var metrics: WorkerMetrics!

    override func setUp() {
        exposition = PrometheusExposition()
        metrics = WorkerMetrics(factory: exposition.factory)
    }

    /// Series line (name plus labels) → value, for every sample line.
    private func samples() -> [String: String] {
        var result: [String: String] = [:]
        for line in exposition.text().split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            result[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return result
    }

    private func typeLines() -> [String] {
        exposition.text().split(separator: "\n").filter { $0.hasPrefix("# TYPE") }.map(String.init)
    }

    func testCountersCarryTheirLabelsAndAccumulate() {
        metrics.consumed(topic: "push.notifications", count: 5)
        metrics.consumed(topic: "push.notifications", count: 2)
        metrics.consumed(topic: "push.retry.5s")
        metrics.sent(provider: .apns, app: "shop", status: .accepted, reason: nil)
        metrics.sent(provider: .apns, app: "shop", status: .accepted, reason: nil)
        metrics.sent(provider: .fcm, app: "shop", status: .invalidToken, reason: "UNREGISTERED")
        metrics.sent(provider: .apns, app: "news", status: .retrying, reason: "TooManyRequests")
        metrics.retried(tier: "1m", count: 3)
        metrics.deadLettered(reason: "exhausted")
        metrics.suppressed(count: 4)
        metrics.suppressed(count: 0)
        metrics.tokenRefreshed(provider: .fcm, app: "shop")
        metrics.resentWithoutStatus(provider: .apns, reason: "goaway", count: 2)
        metrics.rateLimited(provider: .apns, app: "news")
        metrics.receipt(kind: "delivered", count: 3)
        metrics.receipt(kind: "opened")

        let s = samples()
        XCTAssertEqual(s[#"pushfleet_messages_consumed_total{topic="push.notifications"}"#], "7")
        XCTAssertEqual(s[#"pushfleet_messages_consumed_total{topic="push.retry.5s"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="apns",app="shop",status="accepted",reason=""}"#], "2")
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="fcm",app="shop",status="invalid_token",reason="UNREGISTERED"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="apns",app="news",status="retry",reason="TooManyRequests"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_retries_total{tier="1m"}"#], "3")
        XCTAssertEqual(s[#"pushfleet_dead_letters_total{reason="exhausted"}"#], "1")
        XCTAssertEqual(s["pushfleet_suppressed_duplicates_total"], "4")
        XCTAssertEqual(s[#"pushfleet_token_refreshes_total{provider="fcm",app="shop"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_resent_without_status_total{provider="apns",reason="goaway"}"#], "2")
        XCTAssertEqual(s[#"pushfleet_rate_limited_total{provider="apns",app="news"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_receipts_total{kind="delivered"}"#], "3")
        XCTAssertEqual(s[#"pushfleet_receipts_total{kind="opened"}"#], "1")
        XCTAssertTrue(typeLines().contains("# TYPE pushfleet_notifications_sent_total counter"))
        XCTAssertEqual(typeLines().filter { $0.contains("pushfleet_messages_consumed_total") }.count, 1)
    }

    func testGaugesHoldTheLastValue() {
        metrics.setInFlight(12)
        metrics.setInFlight(7)
        metrics.setLag(topic: "push.notifications", partition: 3, messages: 42)
        metrics.setLag(topic: "push.notifications", partition: 4, messages: -1)
        metrics.setCircuitState(provider: .apns, app: "shop", host: "api.push.apple.com:443", state: .open)
        metrics.setCircuitState(provider: .fcm, app: "shop", host: "fcm.googleapis.com:443", state: .halfOpen)
        metrics.setPartitionsAssigned(6)

        let s = samples()
        XCTAssertEqual(s["pushfleet_in_flight"], "7.0")
        XCTAssertEqual(s[#"pushfleet_consumer_lag{topic="push.notifications",partition="3"}"#], "42.0")
        XCTAssertEqual(s[#"pushfleet_consumer_lag{topic="push.notifications",partition="4"}"#], "0.0")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="apns",app="shop",host="api.push.apple.com:443"}"#], "2.0")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="fcm",app="shop",host="fcm.googleapis.com:443"}"#], "1.0")
        XCTAssertEqual(s["pushfleet_partitions_assigned"], "6.0")
        XCTAssertTrue(typeLines().contains("# TYPE pushfleet_consumer_lag gauge"))
    }

    func testInFlightCanBeMovedByDeltas() async throws {
        let metrics = try XCTUnwrap(self.metrics)
        metrics.setInFlight(2)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    metrics.addInFlight(1)
                    metrics.addInFlight(-1)
                }
            }
            for _ in 0..<3 { group.addTask { metrics.addInFlight(1) } }
        }
        XCTAssertEqual(samples()["pushfleet_in_flight"], "5.0")
    }

    func testExportTurnsWorkerTotalsIntoCounterIncrements() {
        var totals = WorkerCounters()
        totals.consumedByTopic = ["push.notifications": 10]
        let accepted = WorkerCounters.SentKey(provider: .apns, app: "shop", status: .accepted, reason: "")
        totals.sent = [accepted: 8]
        totals.retriesByTier = ["5s": 1]
        totals.deadLettersByReason = ["exhausted": 1]
        totals.suppressed = 3
        totals.inFlightByLane = [.interactive: 4]
        totals.partitionsAssigned = 2
        metrics.export(totals)
        metrics.export(totals)  // nothing new: nothing counted twice
        totals.consumedByTopic["push.notifications"] = 15
        totals.consumedByTopic["push.retry.5s"] = 1
        totals.sent[accepted] = 9
        totals.inFlightByLane = [.interactive: 1]
        metrics.export(totals)

        let s = samples()
        XCTAssertEqual(s[#"pushfleet_messages_consumed_total{topic="push.notifications"}"#], "15")
        XCTAssertEqual(s[#"pushfleet_messages_consumed_total{topic="push.retry.5s"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="apns",app="shop",status="accepted",reason=""}"#], "9")
        XCTAssertEqual(s[#"pushfleet_retries_total{tier="5s"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_dead_letters_total{reason="exhausted"}"#], "1")
        XCTAssertEqual(s["pushfleet_suppressed_duplicates_total"], "3")
        XCTAssertEqual(s["pushfleet_in_flight"], "1.0")
        XCTAssertEqual(s["pushfleet_partitions_assigned"], "2.0")
    }

    func testProviderClientStatsBecomeCountersAndCircuitState() {
        var stats = ProviderClientStats()
        stats.tokenRefreshes = 2
        stats.rateLimited = 1
        stats.resentWithoutStatus = 3
        stats.resentAfterReset = 2
        stats.resentNoStatus = 1
        stats.circuitState = .halfOpen
        metrics.export(stats, provider: .fcm, app: "shop", host: "fcm.googleapis.com")
        metrics.export(stats, provider: .fcm, app: "shop", host: "fcm.googleapis.com")
        stats.tokenRefreshes = 3
        stats.circuitState = .closed
        metrics.export(stats, provider: .fcm, app: "shop", host: "fcm.googleapis.com")
        var other = ProviderClientStats()
        other.tokenRefreshes = 1
        metrics.export(other, provider: .apns, app: "shop", host: "api.push.apple.com")
        let s = samples()
        XCTAssertEqual(s[#"pushfleet_token_refreshes_total{provider="fcm",app="shop"}"#], "3")
        XCTAssertEqual(s[#"pushfleet_token_refreshes_total{provider="apns",app="shop"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_rate_limited_total{provider="fcm",app="shop"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_resent_without_status_total{provider="fcm",reason="reset"}"#], "2")
        XCTAssertEqual(s[#"pushfleet_resent_without_status_total{provider="fcm",reason="no_status"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="fcm",app="shop",host="fcm.googleapis.com"}"#], "0.0")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="apns",app="shop",host="api.push.apple.com"}"#], "0.0")
    }

    /// Clients sharing a host (every provider behind one simulator, two apps on
    /// FCM's one host) each keep their own circuit series: an open circuit is
    /// never hidden by a closed one on the same host.
    func testCircuitStateIsPerProviderAndAppEvenOnOneHost() {
        let host = "https://127.0.0.1:8443"
        var open = ProviderClientStats()
        open.circuitState = .open(until: .now + .seconds(30))
        metrics.export(open, provider: .fcm, app: "shop", host: host)
        metrics.export(ProviderClientStats(), provider: .apns, app: "shop", host: host)
        metrics.export(ProviderClientStats(), provider: .fcm, app: "news", host: host)
        let s = samples()
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="fcm",app="shop",host="https://127.0.0.1:8443"}"#], "2.0")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="apns",app="shop",host="https://127.0.0.1:8443"}"#], "0.0")
        XCTAssertEqual(s[#"pushfleet_circuit_state{provider="fcm",app="news",host="https://127.0.0.1:8443"}"#], "0.0")
    }

    /// Lag per lane, parked messages per lane and the quota share reach the exposition.
    func testLaneLagParkedMessagesAndQuotaShareAreExported() {
        let topics = TopicNames()
        metrics.export(lag: [
            KafkaPartitionLag(partition: KafkaTopicPartition(topic: "push.notifications", partition: 0), highWatermark: 10, position: 4),
            KafkaPartitionLag(partition: KafkaTopicPartition(topic: "push.parked", partition: 1), highWatermark: 3, position: 1),
            KafkaPartitionLag(partition: KafkaTopicPartition(topic: "push.notifications.bulk", partition: 0), highWatermark: 900, position: 0),
        ], topics: topics)
        var totals = WorkerCounters()
        totals.parkedMessagesByLane = [.bulk: 4]
        totals.quotaShare = 0.5
        metrics.export(totals)
        let s = samples()
        XCTAssertEqual(s[#"pushfleet_lane_lag{lane="interactive"}"#], "8.0")
        XCTAssertEqual(s[#"pushfleet_lane_lag{lane="bulk"}"#], "900.0")
        XCTAssertEqual(s[#"pushfleet_parked_messages_total{lane="bulk"}"#], "4")
        XCTAssertEqual(s["pushfleet_quota_share"], "0.5")
    }

    func testWorkerMetricsIsTheWorkersLatencyObserver() {
        let observer: any WorkerObserver = metrics
        observer.batchCommitted(seconds: 0.004)
        observer.providerRoundTrip(provider: .fcm, seconds: 0.05)
        let s = samples()
        XCTAssertEqual(s["pushfleet_batch_commit_seconds_count"], "1")
        XCTAssertEqual(s[#"pushfleet_provider_request_seconds_bucket{provider="fcm",le="0.05"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_provider_request_seconds_bucket{provider="fcm",le="0.025"}"#], "0")
    }

    func testRevokedPartitionsLoseTheirLagSeries() {
        metrics.setLag(topic: "push.notifications", partition: 0, messages: 5)
        metrics.setLag(topic: "push.notifications", partition: 1, messages: 6)
        metrics.setLag(topic: "push.retry.5s", partition: 1, messages: 7)
        metrics.retainLag(assigned: [("push.notifications", 1), ("push.retry.5s", 0)])
        let s = samples()
        XCTAssertNil(s[#"pushfleet_consumer_lag{topic="push.notifications",partition="0"}"#])
        XCTAssertNil(s[#"pushfleet_consumer_lag{topic="push.retry.5s",partition="1"}"#])
        XCTAssertEqual(s[#"pushfleet_consumer_lag{topic="push.notifications",partition="1"}"#], "6.0")
        // A partition that comes back gets a fresh series.
        metrics.setLag(topic: "push.notifications", partition: 0, messages: 2)
        XCTAssertEqual(samples()[#"pushfleet_consumer_lag{topic="push.notifications",partition="0"}"#], "2.0")
    }

    func testLagArithmetic() {
        XCTAssertEqual(ConsumerLagSampler.lag(high: 100, low: 0, committed: 60), 40)
        XCTAssertEqual(ConsumerLagSampler.lag(high: 100, low: 20, committed: nil), 80)
        XCTAssertEqual(ConsumerLagSampler.lag(high: 100, low: 50, committed: 10), 50, "retention moved past the commit")
        XCTAssertEqual(ConsumerLagSampler.lag(high: 100, low: 0, committed: 100), 0)
    }

    func testProviderRoundTripHistogramUsesMillisecondToTenSecondBuckets() {
        metrics.providerRoundTrip(provider: .apns, seconds: 0.003)
        metrics.providerRoundTrip(provider: .apns, seconds: 0.2)
        metrics.providerRoundTrip(provider: .apns, seconds: 20)
        let s = samples()
        let expected: [(String, String)] = [
            ("0.001", "0"), ("0.0025", "0"), ("0.005", "1"), ("0.01", "1"), ("0.025", "1"), ("0.05", "1"),
            ("0.1", "1"), ("0.25", "2"), ("0.5", "2"), ("1.0", "2"), ("2.5", "2"), ("5.0", "2"), ("10.0", "2"),
            ("+Inf", "3"),
        ]
        for (le, count) in expected {
            XCTAssertEqual(s[#"pushfleet_provider_request_seconds_bucket{provider="apns",le="\#(le)"}"#], count, "le=\(le)")
        }
        let bucketLines = s.keys.filter { $0.hasPrefix("pushfleet_provider_request_seconds_bucket") }
        XCTAssertEqual(bucketLines.count, expected.count)
        XCTAssertEqual(s[#"pushfleet_provider_request_seconds_count{provider="apns"}"#], "3")
        let sum = s[#"pushfleet_provider_request_seconds_sum{provider="apns"}"#].flatMap(Double.init)
        XCTAssertEqual(sum ?? -1, 20.203, accuracy: 1e-6)
        XCTAssertTrue(typeLines().contains("# TYPE pushfleet_provider_request_seconds histogram"))
    }

    func testCreatedToAcceptedHistogramReachesTenMinutes() {
        metrics.createdToAccepted(provider: .fcm, seconds: 0.004)
        metrics.createdToAccepted(provider: .fcm, seconds: -2)  // clock skew counts as zero
        metrics.createdToAccepted(provider: .fcm, seconds: 400)
        metrics.createdToAccepted(provider: .fcm, seconds: 601)
        metrics.enqueuedToAccepted(provider: .fcm, seconds: 0.02)
        metrics.batchCommitted(seconds: 0.02)
        let s = samples()
        XCTAssertEqual(s[#"pushfleet_created_to_accepted_seconds_bucket{provider="fcm",le="0.005"}"#], "2")
        XCTAssertEqual(s[#"pushfleet_created_to_accepted_seconds_bucket{provider="fcm",le="300.0"}"#], "2")
        XCTAssertEqual(s[#"pushfleet_created_to_accepted_seconds_bucket{provider="fcm",le="600.0"}"#], "3")
        XCTAssertEqual(s[#"pushfleet_created_to_accepted_seconds_bucket{provider="fcm",le="+Inf"}"#], "4")
        XCTAssertEqual(s[#"pushfleet_created_to_accepted_seconds_count{provider="fcm"}"#], "4")
        XCTAssertEqual(s.keys.filter { $0.hasPrefix("pushfleet_created_to_accepted_seconds_bucket") }.count,
                       MetricBuckets.createdToAccepted.count + 1)
        XCTAssertEqual(s[#"pushfleet_enqueued_to_accepted_seconds_bucket{provider="fcm",le="0.025"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_enqueued_to_accepted_seconds_bucket{provider="fcm",le="0.01"}"#], "0")
        XCTAssertEqual(s.keys.filter { $0.hasPrefix("pushfleet_enqueued_to_accepted_seconds_bucket") }.count,
                       MetricBuckets.enqueuedToAccepted.count + 1)
        XCTAssertEqual(s[#"pushfleet_batch_commit_seconds_bucket{le="0.025"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_batch_commit_seconds_bucket{le="0.01"}"#], "0")
        XCTAssertEqual(s["pushfleet_batch_commit_seconds_count"], "1")
    }

    func testLabelValuesNeverCarryTokensOrFreeText() {
        let apnsToken = String(repeating: "ab12", count: 16)  // 64 hex digits
        metrics.sent(provider: .apns, app: apnsToken, status: .rejected, reason: "retries exhausted: \"boom\"\nsecret")
        metrics.deadLettered(reason: "retries exhausted after attempt 3: Transport(92)")
        metrics.receipt(kind: "bounced")
        metrics.sent(provider: .fcm, app: "shop", status: .pending, reason: "Transport(92)")
        let s = samples()
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="apns",app="other",status="rejected",reason="other"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_dead_letters_total{reason="other"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_receipts_total{kind="other"}"#], "1")
        XCTAssertEqual(s[#"pushfleet_notifications_sent_total{provider="fcm",app="shop",status="other",reason="Transport(92)"}"#], "1")
        XCTAssertFalse(exposition.text().contains(apnsToken))
        XCTAssertFalse(exposition.text().contains("secret"))
    }

    func testDistinctReasonsAreCapped() {
        for i in 0..<(LabelBudget.maxDistinct + 10) {
            metrics.deadLettered(reason: "Reason\(i)")
        }
        let s = samples()
        let series = s.keys.filter { $0.hasPrefix("pushfleet_dead_letters_total{") }
        XCTAssertEqual(series.count, LabelBudget.maxDistinct + 1)
        XCTAssertEqual(s[#"pushfleet_dead_letters_total{reason="other"}"#], "10")
        XCTAssertEqual(s[#"pushfleet_dead_letters_total{reason="Reason0"}"#], "1")
    }
}
