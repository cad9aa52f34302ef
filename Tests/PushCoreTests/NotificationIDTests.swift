import Foundation
import XCTest
@testable import PushCore

final class NotificationIDTests: XCTestCase {
    /// A fixed sequence, so a failure names ids that can be made again.
    private struct Counter: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return UUIDText.splitmix64Finalizer(state)
        }
    }

    private func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    func testVersionVariantAndMillisecondsAreRFC9562() {
        var rng = Counter(state: 1)
        let date = Date(timeIntervalSince1970: 1_795_262_400.123_9)  // 2026-11-21T12:00:00.1239Z
        for _ in 0..<1_000 {
            let id = NotificationID.timeOrdered(at: date, using: &rng)
            let b = bytes(id)
            XCTAssertEqual(b[6] >> 4, 7, id.uuidString)
            XCTAssertEqual(b[8] >> 6, 0b10, id.uuidString)
            XCTAssertEqual(NotificationID.milliseconds(of: id), 1_795_262_400_123, id.uuidString)
            // The first 12 hex digits are the milliseconds, as RFC 9562's example lays them out.
            XCTAssertEqual(String(id.uuidString.prefix(8) + id.uuidString.dropFirst(9).prefix(4)),
                           String(1_795_262_400_123, radix: 16, uppercase: true).leftPadded(to: 12), id.uuidString)
        }
        XCTAssertNil(NotificationID.milliseconds(of: UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10")!))
        XCTAssertNil(NotificationID.milliseconds(of: UUID(uuidString: "017f22e2-79b0-7cc3-1a8c-d86f42e9ab7e")!),
                     "version 7 digit but not the RFC variant")
    }

    /// PostgreSQL orders uuid by its bytes: an id from a later millisecond sorts after every earlier one.
    func testLaterMillisecondsSortLaterByteWise() {
        var rng = Counter(state: 2)
        var previous: [UInt8]?
        for ms in stride(from: Int64(1_700_000_000_000), to: 1_700_000_000_000 + 5_000, by: 7) {
            let id = NotificationID.timeOrdered(at: Date(timeIntervalSince1970: Double(ms) / 1000 + 0.000_4), using: &rng)
            let b = bytes(id)
            if let previous { XCTAssertTrue(previous.lexicographicallyPrecedes(b), id.uuidString) }
            XCTAssertEqual(NotificationID.milliseconds(of: id), UInt64(ms), id.uuidString)
            previous = b
        }
    }

    func testIdsInOneMillisecondAreDistinct() {
        var system = SystemRandomNumberGenerator()
        let date = Date()
        var seen = Set<UUID>()
        for _ in 0..<200_000 { seen.insert(NotificationID.timeOrdered(at: date, using: &system)) }
        XCTAssertEqual(seen.count, 200_000)
        let now = NotificationID.timeOrdered()
        let ms = try? XCTUnwrap(NotificationID.milliseconds(of: now))
        XCTAssertLessThan(abs(Double(ms ?? 0) - Date().timeIntervalSince1970 * 1000), 60_000)
    }

    /// Any date, however odd, gives an id (never a trap): before 1970 and
    /// non-finite count as 0 ms; past 48 bits of milliseconds it wraps.
    func testAnyDateGivesAnId() {
        var rng = Counter(state: 3)
        let cases: [(TimeInterval, UInt64)] = [
            (-1, 0), (-1e300, 0), (.nan, 0), (-.infinity, 0), (.infinity, 0), (0, 0), (0.000_9, 0),
            (281_474_976_710.655, 0xFFFF_FFFF_FFFF), (281_474_976_710.656, 0),
            (1e300, 0),  // clamped to 2^63 ms, whose low 48 bits are 0
        ]
        for (seconds, expected) in cases {
            let id = NotificationID.timeOrdered(at: Date(timeIntervalSince1970: seconds), using: &rng)
            XCTAssertEqual(NotificationID.milliseconds(of: id), expected, "\(seconds)")
        }
    }

    /// The worker takes a version 7 id as it takes any UUID, in either case.
    func testIntakeAcceptsTimeOrderedIds() throws {
        var rng = Counter(state: 4)
        let id = NotificationID.timeOrdered(at: Date(), using: &rng)
        for text in [id.uuidString, id.uuidString.lowercased()] {
            let json = #"{"schema_version":1,"id":"\#(text)","app":"a","created_at":"\#(Timestamps.format(Date()))","#
                + #""recipients":[{"platform":"ios","token":"\#(String(repeating: "ab", count: 32))"}],"alert":{"body":"x"}}"#
            let decoded = try PushNotification.decode(Array(json.utf8)).get()
            XCTAssertEqual(decoded.id, id)
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
