import Foundation
import Logging
import PushKafka
import PushPostgres

/// Waits out an outage of PostgreSQL or Kafka: runs a step until it succeeds,
/// backing off while the database or the brokers are unreachable, so a
/// restart of either costs a pause, not a worker. Errors that are not an
/// outage propagate (the worker stops with the batch's offsets unstored).
struct OutageRetry: Sendable {
    let logger: Logger

    /// Runs `body` until it succeeds. `what` names the step in the logs.
    func run<T: Sendable>(_ what: String, _ body: () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        while true {
            try Task.checkCancellation()
            do {
                return try await body()
            } catch let error as PostgresError where error.isRetriable {
                logger.warning("database unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            } catch let error as KafkaError where error.isRetriable && !error.isFatal {
                logger.warning("Kafka unavailable; retrying", metadata: ["worker.step": "\(what)", "error": "\(error)"])
            } catch let error as PostgresError where error.kind == .server && !error.isDataError {
                // Refused for a reason no row is to blame for (a missing table, a
                // permission, a full disk): every batch would fail alike. Hold, loudly,
                // until an operator fixes the database; stopping would only restart into it.
                logger.error("database refused the batch; holding until it is fixed",
                             metadata: ["worker.step": "\(what)", "error": "\(error)"])
                try await Task.sleep(for: .seconds(5))
            }
            try await Task.sleep(for: delay)
            // Short cap: a restarted database or a broker back up is used within a second.
            delay = min(delay * 2, .seconds(1))
        }
    }
}
