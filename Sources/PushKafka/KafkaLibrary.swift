import CRdKafka

/// The librdkafka this process loaded (which can differ from the headers it was
/// compiled against: a current library on `LD_LIBRARY_PATH`, or the one the
/// Docker image ships).
public enum KafkaLibrary {
    /// Its version, e.g. `2.0.2` or `2.16.0` (`rd_kafka_version_str`).
    public static var version: String { String(cString: rd_kafka_version_str()) }

    /// Its version as librdkafka encodes it: `0xMMmmrrxx` (major, minor, revision, pre-release).
    public static var versionNumber: Int { Int(rd_kafka_version()) }
}
