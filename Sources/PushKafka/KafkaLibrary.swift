import CRdKafka

/// The librdkafka this process loaded (which can differ from the headers it was
/// compiled against: a current library on `LD_LIBRARY_PATH`, or the one the
/// Docker image ships), and the known faults of the versions in use here.
public enum KafkaLibrary {
    /// Its version, e.g. `2.0.2` or `2.16.0` (`rd_kafka_version_str`).
    public static var version: String { String(cString: rd_kafka_version_str()) }

    /// Its version as librdkafka encodes it: `0xMMmmrrxx` (major, minor, revision, pre-release).
    public static var versionNumber: Int { Int(rd_kafka_version()) }

    /// Whether closing or destroying a cooperative-sticky consumer before its first
    /// assignment can abort the process (`rd_kafka_sticky_assignor_state_destroy:
    /// Assertion 'assignor_state' failed`, librdkafka#4312; fixed in 2.2.0 by
    /// upstream pull request 4381). True for Debian bookworm's 2.0.2.
    public static var abortsOnEarlyCooperativeClose: Bool { abortsOnEarlyCooperativeClose(versionNumber) }

    /// The same, for a `0xMMmmrrxx` version number.
    public static func abortsOnEarlyCooperativeClose(_ version: Int) -> Bool { version < 0x0202_0000 }
}
