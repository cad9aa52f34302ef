extension WorkerMetrics {
    /// Sets `pushfleet_build_info` to 1 with one label per component (PushFleet's
    /// `version`, and `librdkafka`, `libcurl`, `nghttp2`, `openssl`, `libpq`: the
    /// versions this process loaded), so a dashboard or an alert sees which
    /// replicas run what. A value that is not a plain version string is `other`.
    public func setBuildInfo(_ components: [(name: String, version: String)]) {
        let labels = components.map { ($0.name, LabelBudget.isIdentifier($0.version) ? $0.version : LabelBudget.other) }
        gauge(MetricNames.buildInfo, labels).record(1)
    }
}
