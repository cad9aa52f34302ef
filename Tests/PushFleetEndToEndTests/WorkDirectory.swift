import Foundation
import PushTestSupport

/// A test's working directory: files written and read by name, shell steps run in it.
struct WorkDirectory {
    let path: String

    func shell(_ script: String) async throws {
        let run = try await TestEnvironment.run("/bin/sh", ["-c", "cd '\(path)' && " + script], timeout: .seconds(60))
        guard run.status == 0 else { throw TestFailure("\(script) failed: \(run.output)") }
    }

    func read(_ name: String) throws -> String { try String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name), options: .atomic)
    }

    func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
