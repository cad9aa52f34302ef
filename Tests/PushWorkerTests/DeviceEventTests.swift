import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// `schemas/examples/devices/`: every valid example decodes (to what it
/// says), every invalid one is rejected with the offending field named.
final class DeviceEventTests: XCTestCase {
    static var examples: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../schemas/examples/devices").standardized.path
    }

    private func files(_ kind: String) throws -> [(String, [UInt8])] {
        let dir = Self.examples + "/" + kind
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted().map { name in
            (name, Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))))
        }
    }

    func testValidExamplesDecode() throws {
        let valid = try files("valid")
        XCTAssertGreaterThanOrEqual(valid.count, 3)
        for (name, bytes) in valid {
            guard case .success(let event) = DeviceEvent.decode(bytes) else { return XCTFail("\(name) should decode") }
            XCTAssertFalse(event.token.isEmpty, name)
        }
        let ios = try XCTUnwrap(valid.first { $0.0 == "register-ios-user.json" })
        XCTAssertEqual(try DeviceEvent.decode(ios.1).get(), DeviceEvent(
            app: "com.example.news", platform: .ios, token: "3f6c1e0b9a2d4c5e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e",
            userID: "user-42", environment: "production", action: .register,
            at: try XCTUnwrap(Timestamps.parse("2026-11-21T09:30:00.125Z"))))
        let anonymous = try XCTUnwrap(valid.first { $0.0 == "register-android-anonymous.json" })
        let decoded = try DeviceEvent.decode(anonymous.1).get()
        XCTAssertNil(decoded.userID)
        XCTAssertEqual(decoded.environment, "production", "the schema's default")
    }

    func testInvalidExamplesAreRejectedNamingTheField() throws {
        let expected = ["bad-action.json": "action", "bad-environment.json": "environment", "bad-platform.json": "platform",
                        "bad-timestamp.json": "at", "missing-at.json": "at"]
        let invalid = try files("invalid")
        XCTAssertEqual(Set(invalid.map(\.0)), Set(expected.keys))
        for (name, bytes) in invalid {
            guard case .failure(let error) = DeviceEvent.decode(bytes) else { return XCTFail("\(name) should be rejected") }
            XCTAssertEqual(error.kind, .invalid, name)
            XCTAssertEqual(error.issues.map(\.path), [expected[name]], name)
        }
        guard case .failure(let bad) = DeviceEvent.decode(Array("not json".utf8)) else { return XCTFail() }
        XCTAssertEqual(bad.kind, .undecodable)
        guard case .failure(let version) = DeviceEvent.decode(Array(#"{"schema_version": 2}"#.utf8)) else { return XCTFail() }
        XCTAssertEqual(version.kind, .unsupportedSchemaVersion)
    }
}
