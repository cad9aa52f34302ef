import Foundation
import PushPostgres
import XCTest

/// Array parameters, as used for batched writes with `unnest`.
final class PostgresArrayTests: XCTestCase {
    /// Strings that break naive array literals.
    static let nastyStrings: [String?] = [
        #"plain"#, #"with "quotes""#, #"back\slash"#, #"trailing\"#, "comma,separated", "{braces}", "}{",
        "NULL", "null", "", " ", "  padded  ", "tab\there", "new\nline", "ünïcödé ✓ 🚀 日本語", #"\"\\""#, nil,
        "'single'", "a\"b\\c,d{e}f", "\u{7F}\u{1}", "(parens)", "[brackets]",
    ]

    func testUnnestBatchInsertOfAThousandRowsInOneStatement() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let table = TestDatabase.uniqueName("batch")
        try await connection.execute(
            "CREATE TABLE \(table) (n bigint PRIMARY KEY, s text, i bigint, ts timestamptz, u uuid)")

        let count = 1000
        var strings: [String?] = []
        var ints: [Int64?] = []
        var dates: [Date?] = []
        var uuids: [UUID?] = []
        let base = Date(timeIntervalSince1970: 1_795_262_400)
        for index in 0..<count {
            let nasty = Self.nastyStrings[index % Self.nastyStrings.count]
            strings.append(nasty.map { "\($0)#\(index)" } ?? (index % 2 == 0 ? nil : "#\(index)"))
            ints.append(index % 7 == 3 ? nil : Int64(index) * 1_000_003 - 500_000_000)
            dates.append(index % 11 == 5 ? nil : base.addingTimeInterval(Double(index) * 0.000_001 + Double(index) * 3600))
            uuids.append(index % 13 == 0 ? nil : UUID())
        }
        let numbers = (0..<count).map { Int64($0) as Int64? }

        let insert = try await connection.query(
            """
            INSERT INTO \(table) (n, s, i, ts, u)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[], $5::uuid[])
            """,
            [.intArray(numbers), .textArray(strings), .intArray(ints), .timestampArray(dates), .uuidArray(uuids)])
        XCTAssertEqual(insert.affectedRows, count)

        let rows = try await connection.query("SELECT n, s, i, ts, u FROM \(table) ORDER BY n")
        XCTAssertEqual(rows.count, count)
        for (index, row) in rows.enumerated() {
            XCTAssertEqual(try row.int("n"), Int64(index))
            XCTAssertEqual(row["s"], strings[index], "row \(index)")
            XCTAssertEqual(try row.int("i"), ints[index], "row \(index)")
            if let expected = dates[index] {
                let actual = try XCTUnwrap(try row.date("ts"), "row \(index)")
                XCTAssertEqual(actual.timeIntervalSince1970, expected.timeIntervalSince1970, accuracy: 1e-6, "row \(index)")
            } else {
                XCTAssertNil(row["ts"], "row \(index)")
            }
            XCTAssertEqual(try row.uuid("u"), uuids[index], "row \(index)")
        }
        // Every nasty string (not only in the table) arrives byte-for-byte.
        let echoed = try await connection.query(
            "SELECT s, ord FROM unnest($1::text[]) WITH ORDINALITY AS x(s, ord) ORDER BY ord",
            [.textArray(Self.nastyStrings)])
        XCTAssertEqual(echoed.rows.map { $0["s"] }, Self.nastyStrings)
    }

    func testEmptyAndAllNullArrays() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let rows = try await connection.query(
            "SELECT cardinality($1::text[]) AS a, cardinality($2::bigint[]) AS b, "
                + "(SELECT count(*) FROM unnest($3::uuid[]) x WHERE x IS NULL) AS c, "
                + "(SELECT count(*) FROM unnest($4::timestamptz[]) x WHERE x IS NULL) AS d",
            [.textArray([]), .intArray([]), .uuidArray([nil, nil]), .timestampArray([nil])])
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(try row.int("a"), 0)
        XCTAssertEqual(try row.int("b"), 0)
        XCTAssertEqual(try row.int("c"), 2)
        XCTAssertEqual(try row.int("d"), 1)
    }
}
