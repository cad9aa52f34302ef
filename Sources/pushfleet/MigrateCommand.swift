import ArgumentParser
import Foundation
import PushPostgres

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the PostgreSQL migrations (schemas/postgres/NNNN_*.sql, built into this binary), each once, in order.")

    @Option(name: .long, help: "PostgreSQL URL (env PUSHFLEET_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .long, help: "Directory of NNNN_name.sql files to apply instead of the built-in ones (env PUSHFLEET_MIGRATIONS_DIR).")
    var migrations: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.migrate")
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["PUSHFLEET_DATABASE_URL"] else {
            throw CommandFailure("no database: pass --database-url or set PUSHFLEET_DATABASE_URL")
        }
        let applied = try await Self.migrate(url: url, migrations: try migrationsToApply(migrations), logger: logger)
        print(applied.isEmpty ? "schema up to date" : "applied: \(applied.joined(separator: ", "))")
    }

    static func migrate(url: String, migrations: [PostgresMigrator.Migration], logger: Logger) async throws -> [String] {
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        defer { connection.close() }
        return try await PostgresMigrator(connection: connection, logger: logger).migrate(migrations)
    }
}

import Logging
