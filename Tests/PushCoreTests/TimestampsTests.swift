import Foundation
import XCTest
@testable import PushCore

final class TimestampsTests: XCTestCase {
    func testParsesOffsetsFractionsAndRejectsNonsense() {
        XCTAssertEqual(Timestamps.parse("2026-11-21T12:00:00Z")?.timeIntervalSince1970, 1_795_262_400)
        XCTAssertEqual(Timestamps.parse("2026-11-21T13:00:00+01:00")?.timeIntervalSince1970, 1_795_262_400)
        XCTAssertEqual(Timestamps.parse("2026-11-21T11:30:00-00:30")?.timeIntervalSince1970, 1_795_262_400)
        XCTAssertEqual(Timestamps.parse("2026-11-21T12:00:00.25Z")?.timeIntervalSince1970, 1_795_262_400.25)
        XCTAssertEqual(Timestamps.parse("2026-11-21t12:00:00z")?.timeIntervalSince1970, 1_795_262_400)
        XCTAssertNotNil(Timestamps.parse("0001-01-01T00:00:00Z"))
        for bad in ["", "2026-11-21", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-21T12:00:00",
                    "2026-11-21T12:00:00.Z", "2026-11-21T12:00:00Zjunk", "yesterday", "2026-11-21T24:00:00Z",
                    // The schema's pattern: 'T' (not a space), no leap second, years from 0001.
                    "2026-11-21 12:00:00Z", "2016-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "2026-11-21T12:00:00Z\n"] {
            XCTAssertNil(Timestamps.parse(bad), bad)
        }
    }

    /// A retry re-encodes the notification; its created_at (part of the ledger key) must not move.
    func testRoundTripIsStableToTheMicrosecond() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let micros = Int64.random(in: 0...4_102_444_800_000_000, using: &rng)
            let text = Timestamps.format(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            guard let parsed = Timestamps.parse(text) else { return XCTFail(text) }
            XCTAssertEqual(Timestamps.format(parsed), text)
            XCTAssertEqual(Timestamps.parse(Timestamps.format(parsed)), parsed, text)
            XCTAssertEqual(Int64((parsed.timeIntervalSince1970 * 1_000_000).rounded()), micros, text)
        }
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: 1_795_262_400.123)), "2026-11-21T12:00:00.123Z")
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: 1_795_262_400.000_007)), "2026-11-21T12:00:00.000007Z")
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z")
    }
}
