import CLibpq

/// The libpq this process loaded.
public enum PostgresLibrary {
    /// Its version, e.g. `15.13` (`PQlibVersion`: major × 10000 + minor since PostgreSQL 10).
    public static var version: String { format(Int(PQlibVersion())) }

    /// `15.13` for 150013; `9.6.24` for the three-part numbers before PostgreSQL 10.
    static func format(_ number: Int) -> String {
        guard number > 0 else { return "unknown" }
        if number >= 100_000 { return "\(number / 10_000).\(number % 10_000)" }
        return "\(number / 10_000).\(number / 100 % 100).\(number % 100)"
    }
}
