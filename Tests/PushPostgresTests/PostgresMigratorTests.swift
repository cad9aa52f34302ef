import Foundation
import PushPostgres
import PushTestSupport
import XCTest

final class PostgresMigratorTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    private func makeDirectory(_ files: [String: String]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(TestDatabase.uniqueName("migrations"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        directories.append(directory)
        for (name, sql) in files {
            try Data(sql.utf8).write(to: directory.appendingPathComponent(name))
        }
        return directory
    }

    /// Versions are ordered numerically (2 before 10), and later files build on earlier ones.
    private static let files = [
        "0001_create.sql": "CREATE TABLE items (id bigint PRIMARY KEY);\nINSERT INTO items VALUES (1);",
        "2_add_column.sql": "ALTER TABLE items ADD COLUMN label text; UPDATE items SET label = 'one';",
        "10_index.sql": "CREATE INDEX items_label ON items (label); INSERT INTO items VALUES (10, 'ten');",
        "README.md": "not a migration",
    ]

    func testAppliesInVersionOrderOnceAndIsIdempotent() async throws {
        let directory = try makeDirectory(Self.files)
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        _ = try await TestDatabase.useFreshSchema(connection, prefix: "mig")
        let migrator = PostgresMigrator(connection: connection, logger: TestDatabase.logger)

        let applied = try await migrator.migrate(directory: directory.path)
        XCTAssertEqual(applied, ["0001_create.sql", "2_add_column.sql", "10_index.sql"])
        let items = try await connection.query("SELECT id, label FROM items ORDER BY id")
        XCTAssertEqual(items.rows.map { $0["label"] }, ["one", "ten"])
        let recorded = try await connection.query("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version")
        XCTAssertEqual(recorded.rows.map { $0["version"] }, ["1", "2", "10"])
        XCTAssertEqual(recorded.rows.map { $0["checksum"]?.count }, [64, 64, 64])
        XCTAssertNotNil(try recorded.first?.date("applied_at"))

        let again = try await migrator.migrate(directory: directory.path)
        XCTAssertEqual(again, [])
        let observed1 = try await connection.query("SELECT count(*) AS n FROM items").first?.int("n")
        XCTAssertEqual(observed1, 2)

        // A new file is picked up alone.
        try Data("INSERT INTO items VALUES (11, 'eleven');".utf8).write(to: directory.appendingPathComponent("0011_more.sql"))
        let observed2 = try await migrator.migrate(directory: directory.path)
        XCTAssertEqual(observed2, ["0011_more.sql"])
    }

    func testRefusesWhenAnAppliedFileChanged() async throws {
        let directory = try makeDirectory(Self.files)
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        _ = try await TestDatabase.useFreshSchema(connection, prefix: "mig")
        let migrator = PostgresMigrator(connection: connection, logger: TestDatabase.logger)
        try await migrator.migrate(directory: directory.path)

        try Data("ALTER TABLE items ADD COLUMN label text; -- edited".utf8)
            .write(to: directory.appendingPathComponent("2_add_column.sql"))
        try Data("CREATE TABLE should_not_exist (id int);".utf8).write(to: directory.appendingPathComponent("0020_new.sql"))
        let error = await expectPostgresError { try await migrator.migrate(directory: directory.path) }
        XCTAssertEqual(error?.kind, .migration)
        XCTAssertTrue(error?.message.contains("2_add_column.sql") ?? false, error?.message ?? "")
        XCTAssertEqual(error?.isRetriable, false)
        // Nothing after the check ran, and the advisory lock was released.
        let observed3 = try await connection.query("SELECT to_regclass('should_not_exist') IS NULL AS absent").first?.bool("absent")
        XCTAssertEqual(observed3, true)
        let locks = try await connection.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
        XCTAssertEqual(try locks.first?.int("n"), 0)
    }

    func testAFailingFileRollsBackAndIsNamed() async throws {
        let directory = try makeDirectory([
            "0001_ok.sql": "CREATE TABLE good (id int);",
            "0002_bad.sql": "CREATE TABLE half (id int); INSERT INTO nowhere VALUES (1);",
        ])
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        _ = try await TestDatabase.useFreshSchema(connection, prefix: "mig")
        let migrator = PostgresMigrator(connection: connection, logger: TestDatabase.logger)
        let error = await expectPostgresError { try await migrator.migrate(directory: directory.path) }
        XCTAssertEqual(error?.sqlState, "42P01")
        XCTAssertTrue(error?.message.contains("0002_bad.sql") ?? false, error?.message ?? "")
        let stateRows = try await connection.query(
            "SELECT to_regclass('good') IS NOT NULL AS good, to_regclass('half') IS NULL AS half_gone, "
                + "(SELECT count(*) FROM schema_migrations) AS n")
        let state = try XCTUnwrap(stateRows.first)
        XCTAssertEqual(try state.bool("good"), true)
        XCTAssertEqual(try state.bool("half_gone"), true)
        XCTAssertEqual(try state.int("n"), 1)
    }

    func testBadFileNamesAreRejected() throws {
        let duplicate = try makeDirectory(["0001_a.sql": "", "1_b.sql": ""])
        XCTAssertThrowsError(try PostgresMigrator.files(in: duplicate.path)) { error in
            XCTAssertTrue("\(error)".contains("share version 1"), "\(error)")
        }
        let unnumbered = try makeDirectory(["init.sql": ""])
        XCTAssertThrowsError(try PostgresMigrator.files(in: unnumbered.path)) { error in
            XCTAssertTrue("\(error)".contains("init.sql"), "\(error)")
        }
        XCTAssertThrowsError(try PostgresMigrator.files(in: "/nonexistent/dir"))
    }

    func testConcurrentMigratorsApplyEachFileOnce() async throws {
        // A slow first file widens the race window.
        var files = Self.files
        files["0001_create.sql"] = "SELECT pg_sleep(0.3); " + (files["0001_create.sql"] ?? "")
        let directory = try makeDirectory(files)
        let first = try await TestDatabase.connect()
        let second = try await TestDatabase.connect()
        defer {
            first.close()
            second.close()
        }
        let schema = try await TestDatabase.useFreshSchema(first, prefix: "mig")
        try await second.execute("SET search_path TO \(schema)")

        async let a = PostgresMigrator(connection: first, logger: TestDatabase.logger).migrate(directory: directory.path)
        async let b = PostgresMigrator(connection: second, logger: TestDatabase.logger).migrate(directory: directory.path)
        let (appliedA, appliedB) = try await (a, b)
        XCTAssertEqual((appliedA + appliedB).sorted(), ["0001_create.sql", "10_index.sql", "2_add_column.sql"])
        XCTAssertTrue(appliedA.isEmpty || appliedB.isEmpty, "one migrator applied everything: \(appliedA) / \(appliedB)")
        let observed4 = try await first.query("SELECT count(*) AS n FROM items").first?.int("n")
        XCTAssertEqual(observed4, 2)
        let observed5 = try await first.query("SELECT count(*) AS n FROM schema_migrations").first?.int("n")
        XCTAssertEqual(observed5, 3)
    }

    /// The repository's own migrations apply cleanly, and only once.
    func testRepositoryMigrationsApply() async throws {
        let directory = TestEnvironment.migrationsDirectory
        let files = try PostgresMigrator.files(in: directory)
        guard !files.isEmpty else { throw XCTSkip("no migrations in \(directory) yet") }
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        _ = try await TestDatabase.useFreshSchema(connection, prefix: "repo")
        let migrator = PostgresMigrator(connection: connection, logger: TestDatabase.logger)
        let applied = try await migrator.migrate(directory: directory)
        XCTAssertEqual(applied, files.map(\.name))
        let again = try await migrator.migrate(directory: directory)
        XCTAssertEqual(again, [])
    }

    /// The migrations built into the binary are the repository's files, byte
    /// for byte (the build tool embeds schemas/postgres/ on every build), so
    /// the built-in set and the directory record the same checksums.
    func testBuiltInMigrationsAreTheRepositorysFiles() async throws {
        let repository = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = repository.appendingPathComponent("schemas/postgres").path
        let builtIn = try PostgresMigrator.builtIn()
        XCTAssertEqual(builtIn, try PostgresMigrator.migrations(in: directory))
        XCTAssertGreaterThanOrEqual(builtIn.count, 15)
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        _ = try await TestDatabase.useFreshSchema(connection, prefix: "builtin")
        let migrator = PostgresMigrator(connection: connection, logger: TestDatabase.logger)
        let applied = try await migrator.migrate(builtIn)
        XCTAssertEqual(applied, builtIn.map(\.name))
        let again = try await migrator.migrate(directory: directory)
        XCTAssertEqual(again, [], "the files' checksums are the ones recorded")
    }
}
