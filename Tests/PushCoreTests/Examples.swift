import Foundation
import PushCore
import PushTestSupport

/// The example messages under `schemas/examples/`.
enum Examples {
    static let schemasDirectory: URL = TestEnvironment.schemasDirectory

    static func files(_ kind: String) throws -> [URL] {
        let dir = schemasDirectory.appendingPathComponent("examples").appendingPathComponent(kind)
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" && $0.lastPathComponent != "expected.json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        Array(try Data(contentsOf: url))
    }
}

extension Examples {
    /// The examples' `created_at` (2026-11-21T12:00:00Z) as the worker's clock:
    /// a fixed policy, so they keep decoding long after that day.
    static let policy = IntakePolicy(now: Date(timeIntervalSince1970: 1_795_262_400))
}
