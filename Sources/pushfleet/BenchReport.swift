import Foundation
import PushCore

/// A benchmark's figures, in the order they are printed: a two-column table
/// for people and a JSON object (same keys) for tracking over time.
struct BenchReport {
    private(set) var rows: [(label: String, shown: String)] = []
    private(set) var json: [(key: String, value: JSONValue)] = []
    private(set) var warnings: [String] = []

    mutating func add(_ key: String, _ label: String, _ value: Double, _ format: String, unit: String = "") {
        rows.append((label, String(format: format, value) + (unit.isEmpty ? "" : " " + unit)))
        json.append((key, value.isFinite ? .double((value * 1000).rounded() / 1000) : .null))
    }

    mutating func add(_ key: String, _ label: String, _ value: Int) {
        rows.append((label, String(value)))
        json.append((key, .int(Int64(value))))
    }

    mutating func add(_ key: String, _ label: String, text: String) {
        rows.append((label, text))
        json.append((key, .string(text)))
    }

    /// Latency percentiles in milliseconds under `key` (`…_p50_ms`, …).
    mutating func add(latency: BenchLatency, key: String, label: String) {
        let ms = latency.milliseconds
        rows.append((label + " p50 / p90 / p99 / max",
                     String(format: "%.2f / %.2f / %.2f / %.2f ms", ms.p50, ms.p90, ms.p99, ms.max)))
        json.append((key + "_p50_ms", .double(ms.p50)))
        json.append((key + "_p90_ms", .double(ms.p90)))
        json.append((key + "_p99_ms", .double(ms.p99)))
        json.append((key + "_p999_ms", .double(ms.p999)))
        json.append((key + "_max_ms", .double(ms.max)))
    }

    mutating func warn(_ text: String) { warnings.append(text) }

    /// CPU by thread role (`ThreadCPU`) in µs per one
    /// of `count`, largest first, one `  of which …` line each under
    /// `keyPrefix + role`.
    mutating func add(threadRoles roles: [String: Double], keyPrefix: String, count: Int) {
        guard count > 0 else { return }
        for (role, seconds) in roles.sorted(by: { $0.value > $1.value }) where seconds >= 0.0005 {
            add(keyPrefix + role, "  of which " + (Self.threadRoleLabels[role] ?? role), seconds * 1e6 / Double(count), "%.1f", unit: "µs")
        }
    }

    static let threadRoleLabels = [
        "curl": "the curl loop (libcurl, TLS, HTTP/2)",
        "sends": "the send executor (requests, answers, records)",
        "tasks": "Swift's task pool (decode, translate, batch, records)",
        "postgres_client": "libpq threads",
        "kafka_threads": "our librdkafka call threads",
        "librdkafka": "librdkafka's own threads",
        "nio": "the metrics server (NIO)",
        "main": "the main thread",
        "exited": "threads that ended",
        "other": "other threads",
    ]

    /// The table, then the warnings.
    func table(title: String) -> String {
        let width = rows.map(\.label.count).max() ?? 0
        var lines = [title, String(repeating: "─", count: max(title.count, width + 20))]
        for row in rows { lines.append(row.label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + row.shown) }
        for warning in warnings { lines.append("WARNING: " + warning) }
        return lines.joined(separator: "\n")
    }

    /// Writes the JSON object (with the warnings) to `path`.
    func writeJSON(to path: String) throws {
        var members = json
        members.append(("warnings", .array(warnings.map(JSONValue.string))))
        members.append(("recorded_at", .string(ISO8601DateFormatter().string(from: Date()))))
        try Data(JSONValue.object(members).encoded() + [0x0A]).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

/// Megabytes (10⁶ bytes) for the report.
func megabytes(_ bytes: Int?) -> Double { Double(bytes ?? 0) / 1_000_000 }
