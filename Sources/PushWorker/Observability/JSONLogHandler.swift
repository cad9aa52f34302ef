import Foundation
import Logging
import PushCore

/// A swift-log handler that writes one JSON object per line:
///
/// ```json
/// {"timestamp":"2026-11-21T15:14:23.123Z","level":"info","label":"pushfleet.worker",
///  "message":"partitions assigned","metadata":{"kafka.partitions":"[push.notifications[0]]"},
///  "source":"PushWorker","file":"PushWorker/PushWorkerService.swift","line":118}
/// ```
///
/// Metadata (handler, provider and call-site, in that order of precedence)
/// is flattened: nested dictionaries become dotted keys, every value a JSON
/// string, keys sorted. An event's `error` becomes the `error` member.
/// Lines go to a `LogLineSink`, standard error by default.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: LogLineSink

    /// - Parameters:
    ///   - label: the logger's label.
    ///   - level: the least severe level written.
    ///   - sink: where lines go.
    ///   - metadataProvider: contextual metadata added to every line.
    public init(label: String, level: Logger.Level = .info, sink: LogLineSink = .standardError,
                metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.logLevel = level
        self.sink = sink
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        var flat: [(String, String)] = []
        Self.flatten(merged, prefix: "", into: &flat)
        flat.sort { $0.0 < $1.0 }
        var members: [(key: String, value: JSONValue)] = [
            ("timestamp", .string(Self.timestamp(Date()))),
            ("level", .string(event.level.rawValue)),
            ("label", .string(label)),
            ("message", .string(event.message.description)),
        ]
        if let error = event.error { members.append(("error", .string("\(error)"))) }
        if !flat.isEmpty { members.append(("metadata", .object(flat.map { ($0.0, JSONValue.string($0.1)) }))) }
        members += [
            ("source", .string(event.source)),
            ("file", .string(event.file)),
            ("line", .int(Int64(event.line))),
        ]
        var line = JSONValue.object(members).encoded()
        line.append(UInt8(ascii: "\n"))
        sink.write(line)
    }

    /// Nested dictionaries become `outer.inner` keys; arrays and other values become strings.
    static func flatten(_ metadata: Logger.Metadata, prefix: String, into out: inout [(String, String)]) {
        for (key, value) in metadata {
            let name = prefix.isEmpty ? key : prefix + "." + key
            switch value {
            case .dictionary(let nested) where !nested.isEmpty: flatten(nested, prefix: name, into: &out)
            default: out.append((name, Self.string(value)))
            }
        }
    }

    private static func string(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let s): s
        case .stringConvertible(let c): c.description
        case .dictionary, .array: value.description
        }
    }

    /// `2026-11-21T15:14:23.123Z`: PushCore's exact RFC 3339 format, at millisecond precision.
    static func timestamp(_ date: Date) -> String {
        Timestamps.format(Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000))
    }
}
