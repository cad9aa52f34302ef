import Foundation
import Logging
import XCTest

@testable import PushSimulator

/// `docs/simulator.md` describes the configuration file; these tests load what it shows, so a
/// renamed or re-typed key breaks them.
final class DocumentedConfigurationTests: XCTestCase {
    private static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/simulator.md")

    /// The lines of `docs/simulator.md` from the heading `title` to the next `## ` heading.
    private func section(_ title: String) throws -> [Substring] {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try XCTUnwrap(lines.firstIndex(of: Substring(title)), "no heading \(title)")
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex(where: { $0.hasPrefix("## ") }) ?? lines.endIndex
        return Array(lines[(start + 1)..<end])
    }

    /// The first ```json block of the section "A complete example".
    private func documentedExample() throws -> String {
        let lines = try section("## A complete example")
        let open = try XCTUnwrap(lines.firstIndex(of: "```json"), "no ```json block")
        let close = try XCTUnwrap(lines[(open + 1)...].firstIndex(of: "```"), "the ```json block is not closed")
        return lines[(open + 1)..<close].joined(separator: "\n")
    }

    private func load(_ json: String) throws -> SimulatorConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-doc-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try json.write(to: file, atomically: true, encoding: .utf8)
        return try SimulatorConfiguration.load(fromJSONFile: file.path)
    }

    func testDocumentedExampleLoadsAsDescribedAndStarts() async throws {
        var configuration = try load(try documentedExample())
        XCTAssertEqual(configuration.port, 8443)
        XCTAssertEqual(configuration.tls, .generate)
        XCTAssertEqual(configuration.apnsKeys.map(\.keyID), ["ABC123DEFG"])
        XCTAssertEqual(configuration.apnsKeys.first?.teamID, "DEF123GHIJ")
        XCTAssertEqual(configuration.apnsKeys.first?.topics, ["com.example.shop"])
        XCTAssertNil(configuration.apnsEnvironment)
        XCTAssertEqual(Array(configuration.tokenEnvironments.values), [.sandbox])
        XCTAssertEqual(configuration.fcmAccounts.map(\.projectID), ["example-shop"])
        XCTAssertEqual(configuration.fcmAccounts.first?.privateKeyID, "k1")
        XCTAssertEqual(configuration.hmsApps, [SimulatorHMSApp(appID: "101234567", clientSecret: "dev-app-secret")])
        XCTAssertEqual(configuration.webPushVAPIDKeys.count, 1)
        XCTAssertEqual(Array(configuration.deadTokens.values), [Date(timeIntervalSince1970: 1_793_491_200)])
        XCTAssertEqual(
            configuration.scenarios,
            [SimulatorScenario(provider: "fcm", fault: .httpError(status: 503, retryAfterSeconds: 1), count: 1)])
        // Starting parses the PEMs and VAPID keys; a free port keeps the test off 8443.
        configuration.port = 0
        let simulator = PushSimulator(configuration: configuration, logger: Logger(label: "test.simulator"))
        try await simulator.start()
        XCTAssertGreaterThan(simulator.port, 0)
        XCTAssertTrue(simulator.caCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"), simulator.caCertificatePEM)
        try await simulator.shutdown()
    }

    /// Every key the top-level table names is one the loader knows (`null` takes its default).
    func testEveryDocumentedTopLevelKeyIsKnown() throws {
        let lines = try section("## The configuration file")
        let table = lines.prefix(while: { !$0.hasPrefix("### ") })
        let keys = table.compactMap { line -> String? in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        }
        XCTAssertEqual(keys.count, 18, "\(keys)")
        for key in keys {
            XCTAssertNoThrow(try load(#"{"\#(key)": null}"#), key)
        }
    }

    /// One step into a JSON value: an object's key or an array's index.
    private enum Step: CustomStringConvertible {
        case key(String)
        case index(Int)
        var description: String {
            switch self {
            case .key(let key): return "." + key
            case .index(let index): return "[\(index)]"
            }
        }
    }

    /// Every path into `value` (but not `value` itself).
    private func paths(_ value: Any, _ prefix: [Step] = []) -> [[Step]] {
        var found: [[Step]] = []
        if let object = value as? [String: Any] {
            for (key, child) in object { found += [prefix + [.key(key)]] + paths(child, prefix + [.key(key)]) }
        } else if let array = value as? [Any] {
            for (index, child) in array.enumerated() { found += [prefix + [.index(index)]] + paths(child, prefix + [.index(index)]) }
        }
        return found
    }

    /// Whether the last step of `path` is a key of the format, not a device token keying a map.
    private func isFormatKey(_ path: [Step]) -> Bool {
        if path.count >= 2, case .key(let parent) = path[path.count - 2] {
            return parent != "deadTokens" && parent != "tokenEnvironments"
        }
        return true
    }

    /// `value` with the node at `path` changed by `change`, which gets the node's key (nil in an array) and value
    /// and returns its new key (nil keeps it) and value.
    private func changing(_ value: Any, at path: ArraySlice<Step>, _ change: (String?, Any) -> (String?, Any)) -> Any {
        guard let step = path.first else { return value }
        switch step {
        case .key(let key):
            guard var object = value as? [String: Any], let child = object[key] else { return value }
            if path.count == 1 {
                let (newKey, newValue) = change(key, child)
                object[key] = nil
                object[newKey ?? key] = newValue
            } else {
                object[key] = changing(child, at: path.dropFirst(), change)
            }
            return object
        case .index(let index):
            guard var array = value as? [Any], array.indices.contains(index) else { return value }
            array[index] = path.count == 1 ? change(nil, array[index]).1 : changing(array[index], at: path.dropFirst(), change)
            return array
        }
    }

    private func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A value of another JSON type than `value`'s, which no key of the format accepts there.
    private func wrongType(for value: Any) -> Any {
        if value is String { return 1 }
        if value is [Any] || value is [String: Any] || value is NSNull { return "not-this" }
        return "not-a-number-or-boolean"
    }

    /// Renaming any key of the documented example, or giving any of its values another type, is refused:
    /// a document that drifts from the format cannot load.
    func testEveryKeyAndValueOfTheExampleIsChecked() throws {
        let example = try JSONSerialization.jsonObject(with: Data(try documentedExample().utf8))
        let all = paths(example)
        XCTAssertGreaterThan(all.count, 40)
        for path in all {
            let name = path.map(\.description).joined()
            if case .key? = path.last, isFormatKey(path) {
                let renamed = changing(example, at: path[...]) { key, value -> (String?, Any) in ((key ?? "") + "X", value) }
                XCTAssertThrowsError(try load(try json(renamed)), "renamed \(name)") { error in
                    XCTAssertTrue("\(error)".contains("unknown key"), "renamed \(name): \(error)")
                }
            }
            let retyped = changing(example, at: path[...]) { key, value -> (String?, Any) in (key, wrongType(for: value)) }
            XCTAssertThrowsError(try load(try json(retyped)), "re-typed \(name)")
        }
    }
}
