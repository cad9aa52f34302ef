import Foundation
import Logging
import PushHTTP

/// The demo workers' `/metrics`, as an operator's Prometheus sees them. Each
/// worker binds a free port and logs it (`metrics and health listening`).
struct DemoWorkerMetrics {
    /// Where the workers write their logs (`worker-<n>.log`).
    let directory: String
    let logger: Logger

    typealias Sample = MetricsExposition.Sample

    /// The ports the workers' logs name, by log file, in file order.
    func ports() -> [(worker: String, port: Int)] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix("worker-") && $0.hasSuffix(".log") }.sorted()
        return files.compactMap { file in
            guard let log = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8),
                  let range = log.range(of: #"observability\.listen=[0-9.]+:[0-9]+"#, options: .regularExpression),
                  let port = Int(log[range].split(separator: ":").last ?? "") else { return nil }
            return (String(file.dropLast(4)), port)
        }
    }

    /// One scrape of every worker whose port is known: samples by metric name.
    func scrape() async -> [(worker: String, samples: [String: [Sample]])] {
        guard let client = try? HTTP2Client(configuration: HTTPClientConfiguration(requestTimeout: .seconds(5)), logger: logger) else {
            return []
        }
        defer { client.shutdown() }
        var out: [(worker: String, samples: [String: [Sample]])] = []
        for (worker, port) in ports() {
            guard let response = try? await client.execute(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics")),
                  response.status == 200 else { continue }
            out.append((worker, MetricsExposition.parse(String(decoding: response.body, as: UTF8.self))))
        }
        return out
    }

    /// Each worker's share of the fleet-wide quotas (`pushfleet_quota_share`), by worker.
    func quotaShares() async -> [String: Double] {
        var shares: [String: Double] = [:]
        for (worker, samples) in await scrape() {
            if let share = samples["pushfleet_quota_share"]?.first?.value { shares[worker] = share }
        }
        return shares
    }

    /// Waits (at most `timeout`) until every worker owns partitions and
    /// together they own all `total` of them: the group has settled, so
    /// steady traffic does not start inside a rebalance.
    func waitUntilSettled(workers: Int, total: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        var settledTicks = 0
        while ContinuousClock.now < deadline {
            let owned = await scrape().map { $0.samples["pushfleet_partitions_assigned"]?.reduce(0) { $0 + $1.value } ?? 0 }
            let settled = owned.count == workers && owned.allSatisfy { $0 > 0 } && owned.reduce(0, +) == Double(total)
            settledTicks = settled ? settledTicks + 1 : 0
            if settledTicks >= 2 { return true }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return false
    }
}
