import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// Issue 17: counters were absent until their first event, so a dashboard's
/// `rate()` and an alert on `increase()` had nothing to work on at start.
final class MetricsZeroSeriesTests: XCTestCase {
    func testCountersTheConfigurationDeterminesAreExportedAtZeroFromTheStart() throws {
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        var configuration = WorkerConfiguration()
        configuration.apps["com.example.zero"] = .init(
            apns: .init(topic: "com.example.zero", teamID: "T", keyID: "K", keyPath: "/dev/null"), fcm: nil)
        metrics.registerZeroSeries(configuration)
        let text = String(decoding: exposition.render(), as: UTF8.self)
        for line in [
            "pushfleet_suppressed_duplicates_total 0",
            "pushfleet_untrusted_headers_total 0",
            "pushfleet_retry_attempt_unreadable_total 0",
            "pushfleet_retries_total{tier=\"5s\"} 0",
            "pushfleet_retries_total{tier=\"10m\"} 0",
            "pushfleet_dead_letters_total{reason=\"exhausted\"} 0",
            "pushfleet_messages_consumed_total{topic=\"push.notifications\"} 0",
            "pushfleet_poison_records_total{stage=\"write_failed\"} 0",
            "pushfleet_receipts_total{kind=\"opened\"} 0",
            "pushfleet_resent_without_status_total{provider=\"apns\",reason=\"goaway\"} 0",
        ] {
            XCTAssertTrue(text.contains(line + "\n"), "missing \(line) in:\n\(text)")
        }
        XCTAssertTrue(text.contains("pushfleet_token_refreshes_total{") && text.contains("app=\"com.example.zero\""), text)
        // Counting still adds to the same series.
        metrics.suppressed(count: 2)
        XCTAssertTrue(String(decoding: exposition.render(), as: UTF8.self).contains("pushfleet_suppressed_duplicates_total 2\n"))
    }
}
