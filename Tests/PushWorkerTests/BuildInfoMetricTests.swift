import XCTest

@testable import PushWorker

/// `pushfleet_build_info` carries the versions as labels, value 1; a value that
/// is not a plain version string becomes `other` (no free text in a label).
final class BuildInfoMetricTests: XCTestCase {
    func testBuildInfoIsOneWithTheVersionsAsLabels() {
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        metrics.setBuildInfo([("version", "0.1.0"), ("librdkafka", "2.16.0"), ("libcurl", "7.88.1"),
                              ("nghttp2", "1.52.0"), ("openssl", "3.0.15 \"odd\""), ("libpq", "15.13")])
        let line = exposition.text().split(separator: "\n").first { $0.hasPrefix("pushfleet_build_info{") }
        XCTAssertEqual(line.map(String.init),
                       #"pushfleet_build_info{version="0.1.0",librdkafka="2.16.0",libcurl="7.88.1",nghttp2="1.52.0",openssl="other",libpq="15.13"} 1.0"#)
    }
}
