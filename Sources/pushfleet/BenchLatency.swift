import Histogram

/// Latencies in microseconds, kept in an HdrHistogram (3 significant digits,
/// up to 10 minutes), and the percentiles the report prints.
struct BenchLatency {
    private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)

    /// Records one latency; negative values count as 0, huge ones are clamped.
    mutating func record(microseconds: Int64) {
        _ = histogram.record(UInt64(min(max(microseconds, 0), 600_000_000)))
    }

    mutating func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(microseconds: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    var count: UInt64 { histogram.totalCount }

    /// p50, p90, p99, p99.9 and max in milliseconds.
    var milliseconds: (p50: Double, p90: Double, p99: Double, p999: Double, max: Double) {
        func ms(_ p: Double) -> Double { Double(histogram.valueAtPercentile(p)) / 1000 }
        return (ms(50), ms(90), ms(99), ms(99.9), Double(histogram.max) / 1000)
    }
}
