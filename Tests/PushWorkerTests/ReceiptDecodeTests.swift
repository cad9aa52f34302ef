import Foundation
import PushCore
import PushTestSupport
import XCTest
@testable import PushWorker

/// Receipts decode per schemas/receipt.schema.json; its examples are the fixtures.
final class ReceiptDecodeTests: XCTestCase {
    private func examples(_ kind: String) throws -> [(String, [UInt8])] {
        let dir = TestEnvironment.repositoryRoot.appendingPathComponent("schemas/examples/receipts/\(kind)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { ($0, Array(try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    func testValidExamplesDecode() throws {
        let valid = try examples("valid")
        XCTAssertGreaterThanOrEqual(valid.count, 2)
        for (name, bytes) in valid {
            guard case .success(let r) = Receipt.decode(bytes, policy: Self.policy) else { return XCTFail("\(name) should decode") }
            XCTAssertFalse(r.token.isEmpty, name)
        }
        guard case .success(let r) = Receipt.decode(try XCTUnwrap(valid.first { $0.0 == "delivered.json" }).1, policy: Self.policy) else { return XCTFail() }
        XCTAssertEqual(r.kind, .delivered)
        XCTAssertEqual(r.platform, .ios)
        XCTAssertEqual(r.notificationID, UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10"))
        XCTAssertEqual(r.at.timeIntervalSince1970, try XCTUnwrap(Timestamps.parse("2026-11-21T12:00:03.250Z")).timeIntervalSince1970, accuracy: 0.000_001)
    }

    func testInvalidExamplesAreRefusedWithAReason() throws {
        let invalid = try examples("invalid")
        XCTAssertGreaterThanOrEqual(invalid.count, 5)
        for (name, bytes) in invalid {
            guard case .failure(let error) = Receipt.decode(bytes, policy: Self.policy) else { return XCTFail("\(name) should be refused") }
            XCTAssertFalse(error.reason.isEmpty, name)
        }
        guard case .failure(let e) = Receipt.decode(Array("{\"schema_version\": 1".utf8)) else { return XCTFail() }
        XCTAssertTrue(e.reason.hasPrefix("undecodable"), e.reason)
    }

    /// A receipt's unknown field is named in its refusal, cut as an intake
    /// rejection's text is: a 250 KB key (or one Character of 200 KB) must not
    /// become a 250 KB `intake_rejections.reason`, `field_path` and log line.
    func testAnUnknownFieldOfAnyLengthIsNamedWithinBounds() {
        for key in [String(repeating: "k", count: 250_000), "a" + String(repeating: "\u{301}", count: 100_000)] {
            let message = Self.receipt().dropLast() + ",\(String(decoding: JSONValue.string(key).encoded(), as: UTF8.self)):1}"
            guard case .failure(let error) = Receipt.decode(Array(message.utf8), policy: Self.policy) else { return XCTFail("decoded") }
            XCTAssertEqual(error.code, .unknownField)
            XCTAssertLessThanOrEqual(error.reason.utf8.count, IntakeError.maxDetailBytes)
            XCTAssertLessThanOrEqual(error.path.utf8.count, IntakeError.maxPathBytes)
            XCTAssertTrue(error.reason.hasPrefix("invalid: unknown field ") && error.reason.hasSuffix("…"), String(error.reason.prefix(40)))
        }
    }

    func testRoundTripThroughJSON() throws {
        let r = Receipt(notificationID: UUID(), token: "tok", app: "a", platform: .android, kind: .opened,
                        at: Date(timeIntervalSince1970: 1_790_000_000.123456))
        XCTAssertEqual(Receipt.decode(r.json().encoded(), policy: IntakePolicy(now: r.at)), .success(r))
    }

    /// The examples' day (2026-11-21T12:00:00Z) as the worker's clock, so they keep decoding after it.
    static let policy = IntakePolicy(now: Date(timeIntervalSince1970: 1_795_262_400))

    static func receipt(token: String = "tok", at: String = "2026-11-21T12:00:03.250Z") -> String {
        #"{"schema_version":1,"notification_id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","token":"\#(token)","app":"a","platform":"ios","kind":"delivered","at":"\#(at)"}"#
    }

    private func assertRefused(_ bytes: [UInt8], _ code: IntakeReason, at path: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .failure(let error) = Receipt.decode(bytes, policy: Self.policy) else { return XCTFail("decoded", file: file, line: line) }
        XCTAssertEqual(error.code, code, error.reason, file: file, line: line)
        XCTAssertEqual(error.path, path, error.reason, file: file, line: line)
        XCTAssertFalse(error.reason.unicodeScalars.contains("\u{0}"), "a NUL in the DLQ reason", file: file, line: line)
    }

    /// Issue 15: a NUL in a token made the receipt batch retry forever (PostgreSQL
    /// refuses it, the whole batch failed); now such a receipt is refused alone.
    func testHostileReceiptsAreRefusedWithTheIntakeCodes() {
        XCTAssertNoThrow(try Receipt.decode(Array(Self.receipt().utf8), policy: Self.policy).get())
        assertRefused(Array(Self.receipt(token: #"to\u0000k"#).utf8), .nulCharacter, at: "token")
        assertRefused(Array(#"{"schema_version":1,"token":"a"#.utf8) + [0x00] + Array(#""}"#.utf8), .nulCharacter, at: "token")
        assertRefused(Array(#"{"schema_version":1,"token":"a"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8), .invalidUTF8, at: "token")
        assertRefused([0xEF, 0xBB, 0xBF] + Array(Self.receipt().utf8), .byteOrderMark, at: "$")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""schema_version":1"#, with: #""schema_version":1e400"#).utf8),
                      .numberOutOfRange, at: "schema_version")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""schema_version":1"#, with: #""schema_version":9223372036854775808"#).utf8),
                      .wrongType, at: "schema_version")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""app":"a""#, with: #""app":"a","app":"b""#).utf8),
                      .duplicateKey, at: "app")
        assertRefused(Array(Self.receipt().utf8) + [UInt8](repeating: 0x20, count: IntakeLimits.maxMessageBytes), .tooLarge, at: "$")
        assertRefused(Array((String(repeating: "[", count: 70) + String(repeating: "]", count: 70)).utf8), .tooDeep, at: "$")
        assertRefused(Array("[]".utf8), .notObject, at: "$")
        // A token the ledger's key can hold (2048 bytes), and one byte more.
        XCTAssertNoThrow(try Receipt.decode(Array(Self.receipt(token: String(repeating: "t", count: IntakeLimits.maxTokenBytes)).utf8),
                                            policy: Self.policy).get())
        assertRefused(Array(Self.receipt(token: String(repeating: "t", count: IntakeLimits.maxTokenBytes + 1)).utf8), .invalidValue, at: "token")
        assertRefused(Array("{".utf8), .notJSON, at: "$")
        for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-11-21T13:00:01Z", "2026-10-24T11:59:59Z"] {
            assertRefused(Array(Self.receipt(at: at).utf8), .timestampOutOfWindow, at: "at")
        }
        // By default the window is around the clock now: years 0001 and 9999 never pass.
        for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            guard case .failure(let e) = Receipt.decode(Array(Self.receipt(at: at).utf8)) else { XCTFail(at); continue }
            XCTAssertEqual(e.code, .timestampOutOfWindow)
        }
        assertRefused(Array(Self.receipt(at: "yesterday").utf8), .invalidTimestamp, at: "at")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""app":"a","#, with: "").utf8), .missingField, at: "app")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""app":"a""#, with: #""app":1"#).utf8), .wrongType, at: "app")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""app":"a""#, with: #""app":"a","x":1"#).utf8), .unknownField, at: "x")
        assertRefused(Array(Self.receipt().replacingOccurrences(of: #""schema_version":1"#, with: #""schema_version":2"#).utf8),
                      .unsupportedSchemaVersion, at: "schema_version")
    }
}
