import Foundation
import Logging
import PushPostgres

/// A fresh schema of its own with every migration of `schemas/postgres`
/// applied, on the server `scripts/with-postgres.sh` started: for tests of the
/// worker's stores, the receipts consumer and the analysts' views.
package struct MigratedDatabase: Sendable {
    package struct NotConfigured: Error, CustomStringConvertible {
        package var description: String {
            "this test needs PostgreSQL: run it via `bash scripts/with-postgres.sh swift test --filter …` "
                + "(or set PUSHFLEET_TEST_DATABASE_URL)"
        }
    }

    package static let logger = TestEnvironment.logger("pushfleet.database.tests")

    /// URL whose connections use `schema`.
    package let url: String
    package let schema: String
    package let connection: PostgresConnection

    package static func make() async throws -> MigratedDatabase {
        guard let base = TestEnvironment.postgresURL else { throw NotConfigured() }
        let schema = "an_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let setup = try await PostgresConnection.connect(url: base, logger: logger)
        try await setup.execute("CREATE SCHEMA \(schema)")
        setup.close()
        let url = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        let connection = try await PostgresConnection.connect(url: url, logger: logger)
        try await PostgresMigrator(connection: connection, logger: logger).migrate(directory: TestEnvironment.migrationsDirectory)
        return MigratedDatabase(url: url, schema: schema, connection: connection)
    }

    package func pool(size: Int = 2) -> PostgresPool { PostgresPool(url: url, size: size, logger: Self.logger) }

    /// The one row of `sql` as column → text.
    package func row(_ sql: String, _ binds: [PostgresValue] = []) async throws -> [String: String] {
        let rows = try await connection.query(sql, binds)
        guard let first = rows.first else { return [:] }
        var out: [String: String] = [:]
        for (i, name) in rows.columns.enumerated() { out[name] = first[i] }
        return out
    }
}
