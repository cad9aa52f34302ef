import Foundation

/// What `pushfleet status` found, and how it prints it.
struct FleetStatus {
    struct TopicLag {
        var topic: String
        /// `intake`, `retry` or `parked`.
        var kind: String
        var lag: Int64?
        var error: String? = nil
    }

    struct Lane {
        var lane: String
        var group: String
        var topics: [TopicLag]
    }

    /// One provider client's breaker, not closed, in one worker.
    struct Circuit: Equatable {
        var worker: String
        var provider: String
        var app: String
        var host: String
        /// `half_open` or `open`.
        var state: String
    }

    var lanes: [Lane] = []
    var unfinished: [String: Int]?
    var oldestUnfinishedSeconds: Double?
    var databaseError: String?
    var circuits: [Circuit] = []
    /// Workers whose metrics were read.
    var workersRead = 0
    var metricsErrors: [String] = []

    /// The circuits a Prometheus exposition shows half-open (1) or open (2).
    static func circuits(inExposition text: String, worker: String) -> [Circuit] {
        (MetricsExposition.parse(text)["pushfleet_circuit_state"] ?? []).compactMap { sample in
            guard sample.value >= 1 else { return nil }
            let labels = MetricsExposition.labels(sample.labels)
            return Circuit(worker: worker, provider: labels["provider"] ?? "?", app: labels["app"] ?? "?",
                           host: labels["host"] ?? "?", state: sample.value >= 2 ? "open" : "half_open")
        }
    }

    func text() -> String {
        var out: [String] = []
        for lane in lanes {
            out.append("lane \(lane.lane) (group \(lane.group))")
            for t in lane.topics {
                let what = t.kind == "retry" ? "waiting on the tier" : t.kind == "parked" ? "parked: their provider could not take them yet" : "not consumed yet"
                let lag = t.lag.map { "\($0) messages \(what)" } ?? "unknown (\(t.error ?? "?"))"
                out.append("  " + t.topic.padding(toLength: max(28, t.topic.count + 2), withPad: " ", startingAt: 0) + lag)
            }
        }
        if let unfinished {
            let counts = ["pending", "retrying", "parked"].map { "\($0) \(unfinished[$0] ?? 0)" }.joined(separator: ", ")
            let oldest = oldestUnfinishedSeconds.map { "; the oldest was created \(Self.duration($0)) ago" } ?? ""
            out.append("ledger: unfinished deliveries: \(counts)\(oldest)")
        } else if let databaseError {
            out.append("ledger: unknown (\(databaseError))")
        } else {
            out.append("ledger: not read (pass --database-url or --config)")
        }
        if workersRead == 0 {
            out.append("circuits: not read (pass --metrics with each worker's metrics URL)")
        } else if circuits.isEmpty {
            out.append("circuits: all closed in the \(workersRead) worker(s) read")
        } else {
            out.append("circuits not closed:")
            for c in circuits { out.append("  \(c.provider) \(c.app) \(c.host): \(c.state) (\(c.worker))") }
        }
        for error in metricsErrors { out.append("  metrics not read: \(error)") }
        return out.joined(separator: "\n")
    }

    func json() -> String {
        func string(_ text: String) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
            return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
        }
        let laneJSON = lanes.map { lane in
            "{\"lane\":\(string(lane.lane)),\"group\":\(string(lane.group)),\"topics\":["
                + lane.topics.map { t in
                    "{\"topic\":\(string(t.topic)),\"kind\":\"\(t.kind)\",\"lag\":\(t.lag.map(String.init) ?? "null")"
                        + (t.error.map { ",\"error\":\(string($0))" } ?? "") + "}"
                }.joined(separator: ",") + "]}"
        }.joined(separator: ",")
        let unfinishedJSON = unfinished.map { counts in
            "{" + counts.sorted { $0.key < $1.key }.map { "\(string($0.key)):\($0.value)" }.joined(separator: ",") + "}"
        } ?? "null"
        let circuitJSON = circuits.map {
            "{\"worker\":\(string($0.worker)),\"provider\":\(string($0.provider)),\"app\":\(string($0.app)),"
                + "\"host\":\(string($0.host)),\"state\":\"\($0.state)\"}"
        }.joined(separator: ",")
        return "{\"lanes\":[\(laneJSON)],\"unfinished\":\(unfinishedJSON),"
            + "\"oldest_unfinished_seconds\":\(oldestUnfinishedSeconds.map { String(($0 * 10).rounded() / 10) } ?? "null"),"
            + "\"circuits\":[\(circuitJSON)],\"metrics_errors\":[\(metricsErrors.map(string).joined(separator: ","))]}"
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(exactly: seconds.rounded(.down)) ?? 0
        if s < 120 { return "\(s) s" }
        if s < 7_200 { return "\(s / 60) min \(s % 60) s" }
        return "\(s / 3_600) h \(s % 3_600 / 60) min"
    }
}
