import Foundation
import PushCore
import XCTest
@testable import PushWorker

/// Receipts decode per schemas/receipt.schema.json; its examples are the fixtures.
final class ReceiptDecodeTests: XCTestCase {
    private func examples(_ kind: String) throws -> [(String, [UInt8])] {
        let dir = AnalyticsDatabase.repositoryRoot.appendingPathComponent("schemas/examples/receipts/\(kind)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { ($0, Array(try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    func testValidExamplesDecode() throws {
        let valid = try examples("valid")
        XCTAssertGreaterThanOrEqual(valid.count, 2)
        for (name, bytes) in valid {
            guard case .success(let r) = Receipt.decode(bytes) else { return XCTFail("\(name) should decode") }
            XCTAssertFalse(r.token.isEmpty, name)
        }
        guard case .success(let r) = Receipt.decode(try XCTUnwrap(valid.first { $0.0 == "delivered.json" }).1) else { return XCTFail() }
        XCTAssertEqual(r.kind, .delivered)
        XCTAssertEqual(r.platform, .ios)
        XCTAssertEqual(r.notificationID, UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10"))
        XCTAssertEqual(r.at.timeIntervalSince1970, try XCTUnwrap(Timestamps.parse("2026-11-21T12:00:03.250Z")).timeIntervalSince1970, accuracy: 0.000_001)
    }

    func testInvalidExamplesAreRefusedWithAReason() throws {
        let invalid = try examples("invalid")
        XCTAssertGreaterThanOrEqual(invalid.count, 5)
        for (name, bytes) in invalid {
            guard case .failure(let error) = Receipt.decode(bytes) else { return XCTFail("\(name) should be refused") }
            XCTAssertFalse(error.reason.isEmpty, name)
        }
        guard case .failure(let e) = Receipt.decode(Array("{\"schema_version\": 1".utf8)) else { return XCTFail() }
        XCTAssertTrue(e.reason.hasPrefix("undecodable"), e.reason)
    }

    func testRoundTripThroughJSON() throws {
        let r = Receipt(notificationID: UUID(), token: "tok", app: "a", platform: .android, kind: .opened,
                        at: Date(timeIntervalSince1970: 1_790_000_000.123456))
        XCTAssertEqual(Receipt.decode(r.json().encoded()), .success(r))
    }
}
