import Foundation
@testable import PushPostgres
import XCTest

/// Pure encoding/decoding checks (no server needed).
final class PostgresEncodingTests: XCTestCase {
    func testTimestampFormatting() {
        XCTAssertEqual(PostgresTimestamp.format(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000000+00:00")
        XCTAssertEqual(PostgresTimestamp.format(Date(timeIntervalSince1970: 1_795_262_400.123456)),
                       "2026-11-21T12:00:00.123456+00:00")
        XCTAssertEqual(PostgresTimestamp.format(Date(timeIntervalSince1970: -0.5)), "1969-12-31T23:59:59.500000+00:00")
        XCTAssertEqual(PostgresTimestamp.format(Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00.000000+00:00")
    }

    func testTimestampParsing() throws {
        let cases: [(String, Double)] = [
            ("2026-11-21 12:00:00.123456+00", 1_795_262_400.123456),
            ("2026-11-21 12:00:00+00", 1_795_262_400),
            ("2026-11-21 17:30:00+05:30", 1_795_262_400),
            ("2026-11-21 06:59:45-05:00:15", 1_795_262_400),
            ("2026-11-21T12:00:00.5Z", 1_795_262_400.5),
            ("1970-01-01 00:00:00.0000005+00", 0.000001),
        ]
        for (text, expected) in cases {
            let date = try XCTUnwrap(PostgresTimestamp.parse(text), text)
            XCTAssertEqual(date.timeIntervalSince1970, expected, accuracy: 1e-7, text)
        }
        for bad in ["", "2026-11-21", "2026-13-01 00:00:00+00", "2026-11-21 12:00:00", "2026-11-21 12:00:00+00 junk",
                    "26-11-21 12:00:00+00", "2026-11-21 12:00:00.+00"] {
            XCTAssertNil(PostgresTimestamp.parse(bad), bad)
        }
        XCTAssertEqual(PostgresTimestamp.parse("infinity"), .distantFuture)
        XCTAssertEqual(PostgresTimestamp.parse("-infinity"), .distantPast)
    }

    func testTimestampRoundTripAcrossEras() throws {
        for seconds in [-62_200_000_000.25, -1e10, -1, 0, 1e9 + 0.999999, 2.5e11] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = PostgresTimestamp.format(date)
            let back = try XCTUnwrap(PostgresTimestamp.parse(text), text)
            XCTAssertEqual(back.timeIntervalSince1970, seconds, accuracy: 1e-5, text)
        }
    }

    func testByteaHex() {
        XCTAssertEqual(PostgresValue.hexBytea([0, 0xAB, 0xFF]), #"\x00abff"#)
        XCTAssertEqual(PostgresRow.parseHexBytea(#"\x00ABff"#), [0, 0xAB, 0xFF])
        XCTAssertNil(PostgresRow.parseHexBytea("00ab"))
        XCTAssertNil(PostgresRow.parseHexBytea(#"\x0"#))
    }
}
