import Foundation

/// Locates `schemas/` in the repository from this source file's path.
enum Examples {
    static let schemasDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schemas")

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
