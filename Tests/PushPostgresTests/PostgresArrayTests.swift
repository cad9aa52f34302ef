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

    /// A float8's text form as `float8in` reads it (Swift spells NaN and the infinities otherwise).
    static func float8Text(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return "\(value)"
    }

    /// Arrays go in the binary format: each element must arrive exactly as
    /// its text-format scalar does (microseconds, eras, infinities).
    func testBinaryArrayElementsEqualTheTextScalars() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let dates = [Date(timeIntervalSince1970: 946_684_800), Date(timeIntervalSince1970: 946_684_799.999_999),
                     Date(timeIntervalSince1970: 1_795_262_400.123_456), Date(timeIntervalSince1970: -62_200_000_000.25),
                     Date(timeIntervalSince1970: 0.000_000_4), .distantFuture]
        for date in dates {
            let rows = try await connection.query(
                "SELECT ($1::timestamptz[])[1] = $2::timestamptz AS same, ($3::bigint[])[1] = $4 AS ints",
                [.timestampArray([date]), .timestamp(date), .intArray([Int64.min + 1]), .int(Int64.min + 1)])
            XCTAssertEqual(rows.first?["same"], "t", "\(date.timeIntervalSince1970)")
            XCTAssertEqual(rows.first?["ints"], "t")
        }
        // float8: every element the same value as its text scalar, bit for bit where text can say it.
        let doubles: [Double?] = [0, -0.0, 1.5, -7.25, 0.1, .leastNormalMagnitude / 1024, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                  -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, nil, 12.345678901234567]
        let echoed = try await connection.query(
            """
            SELECT ord, x, x = ($2::float8[])[ord] OR (x IS NULL AND ($2::float8[])[ord] IS NULL) AS same,
                   float8send(x) AS bits
            FROM unnest($1::float8[]) WITH ORDINALITY AS u(x, ord) ORDER BY ord
            """,
            [.doubleArray(doubles), .textArray(doubles.map { $0.map(Self.float8Text) })])
        XCTAssertEqual(echoed.count, doubles.count)
        for (index, row) in echoed.rows.enumerated() {
            XCTAssertEqual(row["same"], "t", "element \(index): \(String(describing: doubles[index]))")
            guard let value = doubles[index] else { XCTAssertNil(row["bits"]); continue }
            // float8send is the 8 IEEE 754 bytes, big-endian: the sign of -0.0 and NaN survive.
            let hex = String(value.bitPattern, radix: 16)
            XCTAssertEqual(row["bits"], "\\x" + String(repeating: "0", count: 16 - hex.count) + hex, "element \(index)")
        }
        let infinite = try await connection.query("SELECT ($1::timestamptz[])[1]::text AS t", [.timestampArray([Date(timeIntervalSince1970: .infinity)])])
        XCTAssertEqual(infinite.first?["t"], "infinity")
        do {
            _ = try await connection.query("SELECT $1::text[]", [.textArray(["a\u{0}b"])])
            XCTFail("a NUL inside a text array element must be refused before it is sent")
        } catch let error as PostgresError {
            XCTAssertTrue("\(error)".contains("NUL"), "\(error)")
        }
    }
}

/// Statements prepared once per connection (`query(prepared:)`).
final class PostgresPreparedStatementTests: XCTestCase {
    func testAPreparedStatementRunsAgainWithNewValuesAndSurvivesARollback() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let sql = "SELECT sum(x)::bigint AS s, count(*) AS n FROM unnest($1::bigint[]) AS t(x) WHERE $2::text <> ''"
        let first = try await connection.query(prepared: sql, [.intArray([1, 2, 3]), .text("a")])
        XCTAssertEqual(try first.first?.int("s"), 6)
        try await connection.execute("BEGIN")
        let inside = try await connection.query(prepared: sql, [.intArray([10, nil]), .text("b")])
        XCTAssertEqual(try inside.first?.int("s"), 10)
        try await connection.execute("ROLLBACK")
        // The statement outlives the rolled-back transaction and is reused, not prepared twice.
        let after = try await connection.query(prepared: sql, [.intArray([]), .text("c")])
        XCTAssertEqual(try after.first?.int("n"), 0)
        let named = try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements")
        XCTAssertEqual(try named.first?.int("n"), 1)
    }

    func testAStatementTheServerRefusesIsNotRecordedAsPrepared() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        for _ in 0..<2 {
            do {
                _ = try await connection.query(prepared: "SELECT no_such_column FROM unnest($1::bigint[]) AS t(x)", [.intArray([1])])
                XCTFail("the server must refuse the statement")
            } catch let error as PostgresError {
                XCTAssertTrue("\(error)".contains("no_such_column"), "\(error)")
            }
        }
        let ok = try await connection.query(prepared: "SELECT cardinality($1::bigint[]) AS n", [.intArray([1, 2])])
        XCTAssertEqual(try ok.first?.int("n"), 2)
    }

    /// What a pooler in transaction mode can do to a session's statements.
    func testAStatementTheServerSessionLostOrAlreadyHasIsPreparedAgain() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        // The name the connection will pick first is already taken on the session.
        try await connection.execute("PREPARE pushfleet_1 AS SELECT 0")
        let sql = "SELECT cardinality($1::bigint[]) AS n"
        let first = try await connection.query(prepared: sql, [.intArray([1, 2, 3])])
        XCTAssertEqual(try first.first?.int("n"), 3)
        // The session forgets every statement: the next run prepares again.
        try await connection.execute("DEALLOCATE ALL")
        let again = try await connection.query(prepared: sql, [.intArray([1])])
        XCTAssertEqual(try again.first?.int("n"), 1)
        // Inside a transaction a lost statement is an error (the transaction is already aborted).
        try await connection.execute("DEALLOCATE ALL")
        try await connection.execute("BEGIN")
        do {
            _ = try await connection.query(prepared: sql, [.intArray([1])])
            XCTFail("a statement lost inside a transaction must surface")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "26000", "\(error)")
            XCTAssertTrue(error.isRetriable, "the caller retries the transaction, which prepares again")
        }
        try await connection.execute("ROLLBACK")
        let after = try await connection.query(prepared: sql, [.intArray([])])
        XCTAssertEqual(try after.first?.int("n"), 0)
    }
}
