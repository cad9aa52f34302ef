import Logging
import PushCore

extension ObservabilityConfiguration {
    static func section(_ root: JSONValue?, _ key: String) throws -> JSONValue? {
        guard let value = root?[key], value != .null else { return nil }
        guard case .object = value else { throw ConfigurationError(key: key, problem: "must be an object") }
        return value
    }

    static func string(_ section: JSONValue, _ key: String, path: String) throws -> String? {
        guard let value = section[key], value != .null else { return nil }
        guard let s = value.stringValue else { throw ConfigurationError(key: path, problem: "must be a string") }
        return s
    }

    /// `host:port`, `[v6-address]:port` or `:port` (all IPv4 interfaces).
    static func parseListen(_ text: String, key: String) throws -> (host: String, port: Int) {
        let problem = "must be host:port (e.g. 0.0.0.0:9464, [::]:9464) with a port 0...65535, got \"\(text)\""
        guard let colon = text.lastIndex(of: ":") else { throw ConfigurationError(key: key, problem: problem) }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError(key: key, problem: problem)
        }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { throw ConfigurationError(key: key, problem: problem) }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") || host.contains(" ") {
            throw ConfigurationError(key: key, problem: problem)
        }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    static func parseFormat(_ text: String, key: String) throws -> LogFormat {
        guard let format = LogFormat(rawValue: text.lowercased()) else {
            throw ConfigurationError(key: key, problem: "must be json or text, got \"\(text)\"")
        }
        return format
    }

    static func parseLevel(_ text: String, key: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(key: key, problem: "must be one of \(levels), got \"\(text)\"")
        }
        return level
    }

    /// The handler for `logFormat` at `logLevel`, for `LoggingSystem.bootstrap`.
    public func makeLogHandler(label: String, sink: LogLineSink = .standardError) -> any LogHandler {
        switch logFormat {
        case .json:
            return JSONLogHandler(label: label, level: logLevel, sink: sink)
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
    }
}
