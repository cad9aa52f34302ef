import Foundation
import PushCore
import PushTestSupport
import XCTest
@testable import PushWorker

/// `schemas/examples/devices/`: every valid example decodes (to what it
/// says), every invalid one is rejected with the offending field named.
final class DeviceEventTests: XCTestCase {
    static var examples: String {
        TestEnvironment.schemasDirectory.appendingPathComponent("examples/devices").path
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
            guard case .success(let event) = DeviceEvent.decode(bytes, policy: Self.policy) else { return XCTFail("\(name) should decode") }
            XCTAssertFalse(event.token.isEmpty, name)
        }
        let ios = try XCTUnwrap(valid.first { $0.0 == "register-ios-user.json" })
        XCTAssertEqual(try DeviceEvent.decode(ios.1, policy: Self.policy).get(), DeviceEvent(
            app: "com.example.news", platform: .ios, token: "3f6c1e0b9a2d4c5e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e",
            userID: "user-42", environment: "production", action: .register,
            at: try XCTUnwrap(Timestamps.parse("2026-11-21T09:30:00.125Z"))))
        let anonymous = try XCTUnwrap(valid.first { $0.0 == "register-android-anonymous.json" })
        let decoded = try DeviceEvent.decode(anonymous.1, policy: Self.policy).get()
        XCTAssertNil(decoded.userID)
        XCTAssertEqual(decoded.environment, "production", "the schema's default")
    }

    func testInvalidExamplesAreRejectedNamingTheField() throws {
        let expected = ["bad-action.json": "action", "bad-environment.json": "environment", "bad-platform.json": "platform",
                        "bad-timestamp.json": "at", "missing-at.json": "at", "bad-huawei-token.json": "token"]
        let invalid = try files("invalid")
        XCTAssertEqual(Set(invalid.map(\.0)), Set(expected.keys))
        for (name, bytes) in invalid {
            guard case .failure(let error) = DeviceEvent.decode(bytes, policy: Self.policy) else { return XCTFail("\(name) should be rejected") }
            XCTAssertEqual(error.kind, .invalid, name)
            XCTAssertEqual(error.issues.map(\.path), [expected[name]], name)
        }
        guard case .failure(let bad) = DeviceEvent.decode(Array("not json".utf8)) else { return XCTFail() }
        XCTAssertEqual(bad.kind, .undecodable)
        guard case .failure(let version) = DeviceEvent.decode(Array(#"{"schema_version": 2}"#.utf8)) else { return XCTFail() }
        XCTAssertEqual(version.kind, .unsupportedSchemaVersion)
        XCTAssertEqual(version.reason, .unsupportedSchemaVersion)
    }

    /// The examples' day (2026-11-21T12:00:00Z) as the worker's clock, with the device window (10 years back).
    static let policy = IntakePolicy(now: Date(timeIntervalSince1970: 1_795_262_400), maxAge: DeviceEvent.maxAge)

    static func event(token: String = "t", at: String = "2026-11-21T09:30:00.125Z") -> String {
        #"{"schema_version":1,"app":"a","platform":"android","token":"\#(token)","action":"register","at":"\#(at)"}"#
    }

    private func assertRejected(_ bytes: [UInt8], _ reason: IntakeReason, at path: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .failure(let error) = DeviceEvent.decode(bytes, policy: Self.policy) else { return XCTFail("decoded", file: file, line: line) }
        XCTAssertEqual(error.reason, reason, "\(error)", file: file, line: line)
        XCTAssertEqual(error.fieldPath, path, "\(error)", file: file, line: line)
        XCTAssertFalse(error.description.unicodeScalars.contains("\u{0}"), "a NUL in the reason", file: file, line: line)
    }

    /// Issue 15: device events go through the intake's parser and codes.
    func testHostileEventsAreRejectedWithTheIntakeCodes() {
        XCTAssertNoThrow(try DeviceEvent.decode(Array(Self.event().utf8), policy: Self.policy).get())
        assertRejected(Array(Self.event(token: #"t\u0000"#).utf8), .nulCharacter, at: "token")
        assertRejected(Array(#"{"schema_version":1,"token":"a"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), .invalidUTF8, at: "token")
        assertRejected([0xEF, 0xBB, 0xBF] + Array(Self.event().utf8), .byteOrderMark, at: "$")
        assertRejected(Array(Self.event().replacingOccurrences(of: #""app":"a""#, with: #""app":"a","app":"a""#).utf8), .duplicateKey, at: "app")
        assertRejected(Array(Self.event().replacingOccurrences(of: #""app":"a""#, with: #""app":"a","n":-1e999"#).utf8),
                       .numberOutOfRange, at: "n")
        assertRejected(Array(Self.event().utf8) + [UInt8](repeating: 0x20, count: IntakeLimits.maxMessageBytes), .tooLarge, at: "$")
        assertRejected(Array("[]".utf8), .notObject, at: "$")
        // A token the registry's key can hold (2048 bytes), and one byte more.
        XCTAssertNoThrow(try DeviceEvent.decode(Array(Self.event(token: String(repeating: "t", count: IntakeLimits.maxTokenBytes)).utf8),
                                                policy: Self.policy).get())
        assertRejected(Array(Self.event(token: String(repeating: "t", count: IntakeLimits.maxTokenBytes + 1)).utf8), .invalidValue, at: "token")
        for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-11-21T13:00:01Z"] {
            assertRejected(Array(Self.event(at: at).utf8), .timestampOutOfWindow, at: "at")
        }
        // Ten years back is a registry replayed with its original times: accepted.
        XCTAssertNoThrow(try DeviceEvent.decode(Array(Self.event(at: "2017-01-01T00:00:00Z").utf8), policy: Self.policy).get())
        for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            guard case .failure(let e) = DeviceEvent.decode(Array(Self.event(at: at).utf8)) else { XCTFail(at); continue }
            XCTAssertEqual(e.reason, .timestampOutOfWindow, "the default policy")
        }
        assertRejected(Array(Self.event().replacingOccurrences(of: #""app":"a","#, with: "").utf8), .missingField, at: "app")
        assertRejected(Array(Self.event().replacingOccurrences(of: #""app":"a""#, with: #""app":7"#).utf8), .wrongType, at: "app")
        assertRejected(Array(Self.event().replacingOccurrences(of: #""app":"a""#, with: #""app":"a","x":1"#).utf8), .unknownField, at: "x")
        assertRejected(Array(Self.event(at: "soon").utf8), .invalidTimestamp, at: "at")
    }

    /// The registry takes only what can be sent to, by the rules notification
    /// intake applies: a Push Kit token of printable ASCII, and a subscription
    /// endpoint sealing can use (no userinfo, fragment, bad port or whitespace).
    func testTheRegistryRefusesTokensAndEndpointsThatCannotBeSentTo() {
        func huawei(_ token: String) -> [UInt8] {
            Array(Self.event().replacingOccurrences(of: #""platform":"android","token":"t""#,
                                                    with: #""platform":"huawei","token":\#(String(decoding: JSONValue.string(token).encoded(), as: UTF8.self))"#).utf8)
        }
        XCTAssertNoThrow(try DeviceEvent.decode(huawei("IQAAAACy0wNX:bGyW-_.AI4j6Sv"), policy: Self.policy).get())
        for token in ["bad token!", "IQAAAé", "IQ\tA", String(repeating: "T", count: 513)] {
            assertRejected(huawei(token), .invalidValue, at: "token")
        }
        let keys = #""keys":{"p256dh":"BHs4-4Fsn8ddh2d0UKUr5mRye3b_C01_XFFHs5iWnpWPLnSdE91tcZt4aD-frWbHm9_iQg4cv4D7T50aXxD3qF4","auth":"60eDa6i6clPr6AyFvl75NA"}"#
        func web(_ endpoint: String) -> [UInt8] {
            Array(Self.event().replacingOccurrences(of: #""platform":"android","token":"t""#,
                                                    with: #""platform":"web","subscription":{"endpoint":"\#(endpoint)",\#(keys)}"#).utf8)
        }
        XCTAssertNoThrow(try DeviceEvent.decode(web("https://push.example.net/wp/x"), policy: Self.policy).get())
        for endpoint in ["https://u:p@push.example.net/wp/x", "https://push.example.net/wp/x#f", "https://push.example.net:70000/wp/x",
                         #"https://push.example.net/wp/\u3000x"#] {
            assertRejected(web(endpoint), .invalidValue, at: "subscription.endpoint")
        }
    }
}
