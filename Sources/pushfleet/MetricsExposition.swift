import Foundation

/// Reads the Prometheus text exposition a worker serves on `/metrics`, for the
/// commands that look at running workers (`status`, the demo's figures).
enum MetricsExposition {
    /// One sample: the labels as written (`{topic="push.parked",partition="0"}`) and the value.
    typealias Sample = (labels: String, value: Double)

    /// `name{labels} value` lines by metric name; comments and lines without a number skipped.
    static func parse(_ text: String) -> [String: [Sample]] {
        var samples: [String: [Sample]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let name = series.prefix { $0 != "{" }
            samples[String(name), default: []].append((String(series.dropFirst(name.count)), value))
        }
        return samples
    }

    /// `{a="x",b="y"}` as a dictionary (the worker's label values hold no commas or quotes).
    static func labels(_ written: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for pair in written.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            pairs[String(parts[0])] = String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return pairs
    }
}
