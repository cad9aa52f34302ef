import Foundation
import Logging
import PushPostgres
import PushTestSupport
import XCTest

/// The server these tests run against, started by `scripts/with-postgres.sh`.
enum TestDatabase {
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "PushPostgresTests need a real PostgreSQL server: run them via "
                + "`scripts/with-postgres.sh swift test --scratch-path .build-pg --filter PushPostgresTests` "
                + "(or set PUSHFLEET_TEST_DATABASE_URL)"
        }
    }

    static func url() throws -> String {
        if let url = TestEnvironment.postgresURL { return url }
        XCTFail(NotConfigured().description)
        throw NotConfigured()
    }

    static let logger = TestEnvironment.logger("pushfleet.postgres.tests")

    static func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(url: try url(), logger: logger)
    }

    /// A name no other test (or earlier run) uses.
    static func uniqueName(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }

    /// Creates a fresh schema and points `connection` at it.
    static func useFreshSchema(_ connection: PostgresConnection, prefix: String = "t") async throws -> String {
        let schema = uniqueName(prefix)
        try await connection.execute("CREATE SCHEMA \(schema); SET search_path TO \(schema)")
        return schema
    }
}

/// Asserts that `body` throws a `PostgresError` and returns it.
func expectPostgresError<T>(
    _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async -> PostgresError? {
    do {
        _ = try await body()
        XCTFail("expected a PostgresError, got success", file: file, line: line)
    } catch let error as PostgresError {
        return error
    } catch {
        XCTFail("expected a PostgresError, got \(error)", file: file, line: line)
    }
    return nil
}
