import Foundation
import PushCore

extension WorkerConfiguration {
    /// The window around the worker's clock that a notification's
    /// `created_at` (and a message's Kafka timestamp, for metrics) must fall
    /// in. Outside it a notification is rejected `created_at_out_of_window`:
    /// a producer's clock never reaches a day partition or a histogram
    /// unchecked.
    public struct Intake: Sendable, Equatable {
        /// `intake.created_at_max_age_seconds`: oldest accepted `created_at`
        /// (default 28 days, the longest ttl either provider keeps). A DLQ
        /// replay of anything older is rejected with that reason.
        public var createdAtMaxAge: TimeInterval = 2_419_200
        /// `intake.created_at_max_future_seconds`: producer clock skew
        /// tolerated ahead of the worker's clock (default 1 hour).
        public var createdAtMaxFuture: TimeInterval = 3_600

        public init() {}

        /// The policy decode applies to a batch taken at `now`.
        public func policy(now: Date) -> IntakePolicy {
            IntakePolicy(now: now, maxAge: createdAtMaxAge, maxFuture: createdAtMaxFuture)
        }

        mutating func read(_ r: ConfigReader) throws {
            if let s = try r.int("created_at_max_age_seconds") {
                guard (60...31_622_400).contains(s) else {
                    throw ConfigurationError(key: "intake.created_at_max_age_seconds", problem: "must be 60...31622400 (366 days)")
                }
                createdAtMaxAge = TimeInterval(s)
            }
            if let s = try r.int("created_at_max_future_seconds") {
                guard (0...86_400).contains(s) else {
                    throw ConfigurationError(key: "intake.created_at_max_future_seconds", problem: "must be 0...86400")
                }
                createdAtMaxFuture = TimeInterval(s)
            }
        }
    }
}
