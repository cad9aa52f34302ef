import Foundation
import Logging

/// Applies `NNNN_name.sql` migrations in version order, each once: from a
/// directory, or the ones built into the binary (`builtIn()`, PushFleet's
/// `schemas/postgres/`, embedded at build time by the EmbedMigrations plugin).
///
/// Each file runs in its own transaction together with its row in
/// `schema_migrations(version, name, checksum, applied_at)`, so a failed file
/// leaves nothing behind. The whole run holds a session advisory lock, so
/// several workers starting at once apply each file exactly once. A file
/// whose content changed after it was applied (SHA-256 differs) stops the run
/// before anything is applied, naming the file.
///
/// Files must not manage transactions themselves (`BEGIN`/`COMMIT`) or use
/// statements that cannot run in a transaction (`CREATE INDEX CONCURRENTLY`).
public struct PostgresMigrator: Sendable {
    /// A migration to apply: its version, its file name and its SQL.
    public struct Migration: Sendable, Equatable {
        /// The number before the first `_`.
        public var version: Int
        /// The file name, e.g. `0001_devices.sql`.
        public var name: String
        /// The file's bytes, UTF-8 text; `schema_migrations.checksum` is their SHA-256.
        public var bytes: [UInt8]
    }

    /// A migration file found in the directory.
    public struct File: Sendable, Equatable {
        /// The number before the first `_`.
        public var version: Int
        /// The file name, e.g. `0001_devices.sql`.
        public var name: String
        /// Full path.
        public var path: String
    }

    /// Advisory lock key shared by every PushFleet migrator ("pushmigr").
    public static let advisoryLockKey: Int64 = 0x7075_7368_6D69_6772

    private let connection: PostgresConnection
    private let logger: Logger

    public init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Applies every file of `directory` not applied yet; returns the names applied by this call.
    @discardableResult
    public func migrate(directory: String) async throws -> [String] {
        try await migrate(Self.migrations(in: directory))
    }

    /// Applies every migration not applied yet; returns the names applied by this call.
    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [String] {
        try await connection.query("SELECT pg_advisory_lock($1)", [.int(Self.advisoryLockKey)])
        do {
            let applied = try await migrateLocked(migrations)
            try await unlock()
            return applied
        } catch {
            try? await unlock()
            throw error
        }
    }

    private func unlock() async throws {
        try await connection.query("SELECT pg_advisory_unlock($1)", [.int(Self.advisoryLockKey)])
    }

    private func migrateLocked(_ files: [Migration]) async throws -> [String] {
        try await connection.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        var recorded: [Int: (name: String, checksum: String)] = [:]
        for row in try await connection.query("SELECT version, name, checksum FROM schema_migrations") {
            guard let version = try row.int("version") else { continue }
            recorded[Int(version)] = (row["name"] ?? "", row["checksum"] ?? "")
        }

        // Read and verify everything before applying anything.
        var pending: [(file: Migration, sql: String, checksum: String)] = []
        for file in files {
            let sql = try Self.text(file)
            let checksum = try await sha256Hex(file.bytes)
            if let previous = recorded[file.version] {
                guard previous.name == file.name else {
                    throw PostgresError.migration(
                        "migration version \(file.version) was applied as \(previous.name) but the file is now \(file.name)")
                }
                guard previous.checksum == checksum else {
                    throw PostgresError.migration(
                        "migration \(file.name) changed after it was applied (recorded checksum \(previous.checksum), file now \(checksum)); add a new migration instead of editing an applied one")
                }
            } else {
                pending.append((file, sql, checksum))
            }
        }
        let known = Set(files.map(\.version))
        for version in recorded.keys.sorted() where !known.contains(version) {
            logger.warning("applied migration has no file here (newer release?)",
                           metadata: ["postgres.migration.version": "\(version)"])
        }

        var applied: [String] = []
        for migration in pending {
            try await apply(migration.file, sql: migration.sql, checksum: migration.checksum)
            applied.append(migration.file.name)
        }
        return applied
    }

    private func apply(_ file: Migration, sql: String, checksum: String) async throws {
        let started = Date()
        do {
            try await connection.transaction { connection in
                try await connection.execute(sql)
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, now())",
                    [.int(Int64(file.version)), .text(file.name), .text(checksum)])
            }
        } catch let error as PostgresError {
            throw PostgresError(kind: error.isRetriable ? error.kind : .migration, sqlState: error.sqlState,
                                message: "migration \(file.name) failed: \(error.message)",
                                detail: error.detail, hint: error.hint, file: error.file, line: error.line)
        }
        logger.info("applied migration", metadata: [
            "postgres.migration.name": "\(file.name)",
            "postgres.migration.ms": "\(Int(Date().timeIntervalSince(started) * 1000))",
        ])
    }

    private func sha256Hex(_ bytes: [UInt8]) async throws -> String {
        let rows = try await connection.query("SELECT encode(sha256($1), 'hex') AS sum", [.bytes(bytes)])
        guard let sum = rows.first?["sum"] else { throw PostgresError.migration("server returned no checksum") }
        return sum
    }

    /// The `NNNN_name.sql` files of `directory`, in version order. Other
    /// `.sql` names and duplicate versions are errors; non-`.sql` files are ignored.
    public static func files(in directory: String) throws -> [File] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw PostgresError.migration("cannot list migrations directory \(directory): \(error.localizedDescription)")
        }
        return try ordered(names.filter { $0.hasSuffix(".sql") }) { version, name in
            File(version: version, name: name, path: (directory as NSString).appendingPathComponent(name))
        }
    }

    /// The migrations of `directory` (`files(in:)`), read.
    public static func migrations(in directory: String) throws -> [Migration] {
        try files(in: directory).map { file in
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw PostgresError.migration("cannot read migration \(file.path)")
            }
            return Migration(version: file.version, name: file.name, bytes: [UInt8](data))
        }
    }

    /// The migrations built into this binary: PushFleet's `schemas/postgres/`
    /// as it was when the binary was built, under the same naming rules as a
    /// directory's.
    public static func builtIn() throws -> [Migration] {
        let sql = Dictionary(EmbeddedMigrations.files.map { ($0.name, $0.sql) }, uniquingKeysWith: { first, _ in first })
        return try ordered(EmbeddedMigrations.files.map(\.name)) { version, name in
            Migration(version: version, name: name, bytes: Array((sql[name] ?? "").utf8))
        }
    }

    /// `names` (each `NNNN_name.sql`) made into `make(version, name)`, in
    /// version order; a name of another shape and a repeated version are errors.
    private static func ordered<T>(_ names: [String], _ make: (Int, String) -> T) throws -> [T] {
        var versions: [(version: Int, name: String)] = []
        for name in names {
            let prefix = name.prefix { $0.isASCII && $0.isNumber }
            guard !prefix.isEmpty, name.dropFirst(prefix.count).first == "_", name.count > prefix.count + 5,
                  let version = Int(prefix)
            else {
                throw PostgresError.migration("migration file \(name) is not named NNNN_name.sql")
            }
            if let clash = versions.first(where: { $0.version == version }) {
                throw PostgresError.migration("migration files \(clash.name) and \(name) share version \(version)")
            }
            versions.append((version, name))
        }
        return versions.sorted { $0.version < $1.version }.map { make($0.version, $0.name) }
    }

    private static func text(_ migration: Migration) throws -> String {
        let sql = String(decoding: migration.bytes, as: UTF8.self)
        guard Array(sql.utf8) == migration.bytes, !migration.bytes.contains(0) else {
            throw PostgresError.migration("migration \(migration.name) is not valid UTF-8 text")
        }
        return sql
    }
}
