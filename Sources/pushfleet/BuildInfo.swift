import PushHTTP
import PushKafka
import PushPostgres
import PushProviders

/// What this binary is and which C libraries it loaded (not the headers it was
/// compiled against): `pushfleet version`, the worker's start log line and its
/// `pushfleet_build_info` metric. Each library's own module reads its version.
enum BuildInfo {
    /// PushFleet's own version; the image tags in deploy/ follow it.
    static let version = "0.1.0"

    /// (name, version) of PushFleet and each library, in a fixed order; the names
    /// are the metric's label names.
    static func components() -> [(name: String, version: String)] {
        [
            ("version", version),
            ("librdkafka", KafkaLibrary.version),
            ("libcurl", CurlLibrary.version),
            ("nghttp2", CurlLibrary.nghttp2Version ?? "none"),
            ("openssl", OpenSSLLibrary.version),
            ("libpq", PostgresLibrary.version),
        ]
    }
}
