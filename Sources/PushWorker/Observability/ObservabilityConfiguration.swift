import Logging
import PushCore

/// The operators' listener and the log format/level, from the configuration
/// file's `observability` and `logging` sections plus environment overrides:
///
/// ```json
/// {"observability": {"listen": "0.0.0.0:9464", "liveness_window_seconds": 30},
///  "logging": {"format": "json", "level": "info"}}
/// ```
///
/// `PUSHFLEET_OBSERVABILITY_LISTEN`, `PUSHFLEET_LOG_FORMAT` and
/// `PUSHFLEET_LOG_LEVEL` override the file. Every key is optional.
public struct ObservabilityConfiguration: Sendable, Equatable {
    /// Address of the `/metrics` and `/health/*` listener.
    public var listenHost = "0.0.0.0"
    /// Port of the listener; 0 picks a free one.
    public var listenPort = 9464
    /// How log lines look.
    public var logFormat = LogFormat.json
    /// The least severe level written.
    public var logLevel = Logger.Level.info
    /// Longest gap between poll-loop heartbeats that still counts as live.
    public var livenessWindow: Duration = .seconds(30)

    /// Log line formats.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// One JSON object per line (`JSONLogHandler`).
        case json
        /// swift-log's human-readable `StreamLogHandler` lines.
        case text
    }

    public init() {}

    /// Reads the `observability` and `logging` sections of the configuration
    /// document `root` (nil: no file), then the environment overrides.
    /// Errors name the key (or the environment variable) and the problem.
    public static func parse(_ root: JSONValue?, environment: [String: String]) throws -> Self {
        var config = Self()
        if let section = try section(root, "observability") {
            if let listen = try string(section, "listen", path: "observability.listen") {
                (config.listenHost, config.listenPort) = try parseListen(listen, key: "observability.listen")
            }
            if let value = section["liveness_window_seconds"], value != .null {
                guard case .int(let seconds) = value, (1...3600).contains(seconds) else {
                    throw ConfigurationError(key: "observability.liveness_window_seconds", problem: "must be an integer 1...3600")
                }
                config.livenessWindow = .seconds(seconds)
            }
        }
        if let section = try section(root, "logging") {
            if let format = try string(section, "format", path: "logging.format") {
                config.logFormat = try parseFormat(format, key: "logging.format")
            }
            if let level = try string(section, "level", path: "logging.level") {
                config.logLevel = try parseLevel(level, key: "logging.level")
            }
        }
        if let listen = environment["PUSHFLEET_OBSERVABILITY_LISTEN"] {
            (config.listenHost, config.listenPort) = try parseListen(listen, key: "PUSHFLEET_OBSERVABILITY_LISTEN")
        }
        if let format = environment["PUSHFLEET_LOG_FORMAT"] {
            config.logFormat = try parseFormat(format, key: "PUSHFLEET_LOG_FORMAT")
        }
        if let level = environment["PUSHFLEET_LOG_LEVEL"] {
            config.logLevel = try parseLevel(level, key: "PUSHFLEET_LOG_LEVEL")
        }
        return config
    }
}
