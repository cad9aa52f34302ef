/// The mock broker (librdkafka's mock cluster) holds an empty fetch for the
/// whole `fetch.wait.max.ms` and is not woken by new data (a real broker
/// answers as soon as `fetch.min.bytes` arrive), so a caught-up worker would
/// see each new message up to 500 ms (librdkafka's default) late. The
/// workers the bench and the demo start against it shorten the wait, so the
/// latency they report is the worker's, not that artifact.
enum MockBrokerFetch {
    static let properties = ["fetch.wait.max.ms": "10"]
}
