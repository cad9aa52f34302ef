import Foundation
import PushPostgres
import XCTest

/// Every `PostgresValue` survives a trip through the server.
final class PostgresValueTests: XCTestCase {
    func testEveryScalarTypeRoundTripsThroughATable() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let table = TestDatabase.uniqueName("values")
        try await connection.execute("""
            CREATE TABLE \(table) (
                id int PRIMARY KEY, t text, i bigint, d double precision, b boolean, by bytea,
                ts timestamptz, u uuid, j jsonb)
            """)
        let date = Date(timeIntervalSince1970: 1_795_262_400.123456)  // 2026-11-21 ... .123456 UTC
        let uuid = UUID()
        let bytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, 0x5C, 0x22]
        let text = "héllo 'quoted' \"double\" \\ back, {brace} 🚀"
        let insert = try await connection.query(
            "INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [.int(1), .text(text), .int(Int64.min), .double(-1.5e-300), .bool(true), .bytes(bytes),
             .timestamp(date), .uuid(uuid), .jsonb(#"{"a": [1, "x\"y"], "b": null}"#)])
        XCTAssertEqual(insert.affectedRows, 1)
        XCTAssertEqual(insert.commandTag, "INSERT 0 1")
        try await connection.query(
            "INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [.int(2), .null, .null, .null, .null, .null, .null, .null, .null])

        let rows = try await connection.query("SELECT * FROM \(table) ORDER BY id")
        XCTAssertEqual(rows.columns, ["id", "t", "i", "d", "b", "by", "ts", "u", "j"])
        XCTAssertEqual(rows.count, 2)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row["t"], text)
        XCTAssertEqual(try row.string("t"), text)
        XCTAssertEqual(try row.int("i"), Int64.min)
        XCTAssertEqual(try row.double("d"), -1.5e-300)
        XCTAssertEqual(try row.bool("b"), true)
        XCTAssertEqual(try row.bytes("by"), bytes)
        XCTAssertEqual(row["ts"], "2026-11-21 12:00:00.123456+00")
        XCTAssertEqual(try XCTUnwrap(try row.date("ts")).timeIntervalSince1970, date.timeIntervalSince1970, accuracy: 1e-6)
        XCTAssertEqual(try row.uuid("u"), uuid)
        XCTAssertEqual(row["j"], #"{"a": [1, "x\"y"], "b": null}"#)
        XCTAssertEqual(row[0], "1")

        let nulls = rows.rows[1]
        for column in ["t", "i", "d", "b", "by", "ts", "u", "j"] {
            XCTAssertNil(nulls[column], column)
        }
        XCTAssertNil(try nulls.int("i"))
        XCTAssertNil(try nulls.date("ts"))
        XCTAssertNil(try nulls.uuid("u"))
        XCTAssertNil(try nulls.bytes("by"))
    }

    func testEchoedParametersKeepTheirTypes() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let rows = try await connection.query(
            "SELECT pg_typeof($1)::text AS a, pg_typeof($2)::text AS b, pg_typeof($3)::text AS c, "
                + "pg_typeof($4)::text AS d, pg_typeof($5)::text AS e, pg_typeof($6)::text AS f, "
                + "pg_typeof($7)::text AS g, pg_typeof($8)::text AS h",
            [.text("x"), .int(1), .double(1), .bool(false), .timestamp(Date()), .uuid(UUID()), .jsonb("{}"),
             .intArray([1])])
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.values, ["text", "bigint", "double precision", "boolean", "timestamp with time zone",
                                    "uuid", "jsonb", "bigint[]"])
    }

    func testSpecialDoublesAndEmptyValues() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let rows = try await connection.query(
            "SELECT $1 AS inf, $2 AS ninf, $3 AS nan, $4 AS small, $5 AS empty, $6 AS nobytes, $7 AS huge",
            [.double(.infinity), .double(-.infinity), .double(.nan), .double(Double.leastNonzeroMagnitude), .text(""), .bytes([]),
             .double(1.7976931348623157e308)])
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(try row.double("inf"), .infinity)
        XCTAssertEqual(try row.double("ninf"), -.infinity)
        XCTAssertTrue(try XCTUnwrap(try row.double("nan")).isNaN)
        XCTAssertEqual(try row.double("small"), Double.leastNonzeroMagnitude)
        XCTAssertEqual(row["empty"], "")
        XCTAssertEqual(try row.bytes("nobytes"), [])
        XCTAssertEqual(try row.double("huge"), 1.7976931348623157e308)
    }

    func testTimestampsInOtherZonesAndEras() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        // The server's own rendering in a non-UTC zone still parses to the same instant.
        try await connection.execute("SET TimeZone TO 'Asia/Kolkata'")
        let instant = Date(timeIntervalSince1970: 1_700_000_000.5)
        let zoned = try await connection.query("SELECT $1 AS ts", [.timestamp(instant)])
        let zonedText = try XCTUnwrap(zoned.first?["ts"])
        XCTAssertTrue(zonedText.hasSuffix("+05:30"), zonedText)
        XCTAssertEqual(try XCTUnwrap(try zoned.first?.date("ts")).timeIntervalSince1970, 1_700_000_000.5, accuracy: 1e-6)
        try await connection.execute("SET TimeZone TO 'UTC'")

        let ancient = Date(timeIntervalSince1970: -62_200_000_000)  // 1 BC or so
        let far = Date(timeIntervalSince1970: 253_402_300_799.5)  // 9999-12-31 23:59:59.5 (Double has ~30 µs steps here)
        let epoch = Date(timeIntervalSince1970: 0)
        let rows = try await connection.query(
            "SELECT $1 AS a, $2 AS b, $3 AS c, 'infinity'::timestamptz AS inf, $1 < $3 AS ordered",
            [.timestamp(ancient), .timestamp(far), .timestamp(epoch)])
        let row = try XCTUnwrap(rows.first)
        XCTAssertTrue(try XCTUnwrap(row["a"]).hasSuffix(" BC"))
        XCTAssertEqual(try XCTUnwrap(try row.date("a")).timeIntervalSince1970, ancient.timeIntervalSince1970, accuracy: 1e-6)
        XCTAssertEqual(row["b"], "9999-12-31 23:59:59.5+00")
        XCTAssertEqual(try XCTUnwrap(try row.date("b")).timeIntervalSince1970, far.timeIntervalSince1970, accuracy: 1e-5)
        XCTAssertEqual(row["c"], "1970-01-01 00:00:00+00")
        XCTAssertEqual(try row.date("c"), epoch)
        XCTAssertEqual(try row.date("inf"), Date.distantFuture)
        XCTAssertEqual(try row.bool("ordered"), true)
    }

    func testNulInTextIsRefusedNotTruncated() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let error = await expectPostgresError { try await connection.query("SELECT $1", [.text("a\u{0}b")]) }
        XCTAssertEqual(error?.kind, .invalidValue)
        XCTAssertEqual(error?.isRetriable, false)
        let textArray = await expectPostgresError { try await connection.query("SELECT $1", [.textArray(["\u{0}"])]) }
        XCTAssertEqual(textArray?.kind, .invalidValue)
    }

    func testDecodingTheWrongTypeThrows() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let rows = try await connection.query("SELECT 'abc' AS t")
        let row = try XCTUnwrap(rows.first)
        XCTAssertThrowsError(try row.int("t")) { XCTAssertEqual(($0 as? PostgresError)?.kind, .decoding) }
        XCTAssertThrowsError(try row.uuid("t"))
        XCTAssertThrowsError(try row.date("missing")) { XCTAssertEqual(($0 as? PostgresError)?.kind, .decoding) }
        XCTAssertNil(row["missing"])
        XCTAssertNil(row[5])
    }
}
