/// Why the simulator could not start or be configured.
public struct SimulatorError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable {
        /// A configuration value is wrong; `message` names the key.
        case invalidConfiguration
        /// Certificates or keys could not be made or loaded.
        case tls
        /// Binding or serving failed.
        case io
        /// An operation that needs a running server was called before `start()`.
        case notStarted
    }

    public let kind: Kind
    public let message: String
    /// The underlying error, if any (e.g. a NIO or swift-certificates error).
    public let underlying: (any Error & Sendable)?
    public let file: String
    public let line: Int

    /// Only I/O failures (e.g. a port race) are worth retrying.
    public var isRetriable: Bool { kind == .io }

    public var description: String {
        var text = "SimulatorError.\(kind.rawValue): \(message)"
        if let underlying { text += " (\(underlying))" }
        return text + " [\(file):\(line)]"
    }

    static func invalidConfiguration(
        _ key: String, _ message: String, underlying: (any Error & Sendable)? = nil,
        file: String = #fileID, line: Int = #line
    ) -> SimulatorError {
        SimulatorError(
            kind: .invalidConfiguration, message: "\(key): \(message)", underlying: underlying, file: file, line: line)
    }

    static func tls(
        _ message: String, underlying: (any Error & Sendable)? = nil, file: String = #fileID, line: Int = #line
    ) -> SimulatorError {
        SimulatorError(kind: .tls, message: message, underlying: underlying, file: file, line: line)
    }

    static func io(
        _ message: String, underlying: (any Error & Sendable)? = nil, file: String = #fileID, line: Int = #line
    ) -> SimulatorError {
        SimulatorError(kind: .io, message: message, underlying: underlying, file: file, line: line)
    }

    static func notStarted(file: String = #fileID, line: Int = #line) -> SimulatorError {
        SimulatorError(kind: .notStarted, message: "the simulator is not running", underlying: nil, file: file, line: line)
    }
}
