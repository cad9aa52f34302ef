import Foundation
import Logging
import PushPostgres

extension OutcomeWriter {
    /// What an isolating write did.
    struct IsolatedWrite: Sendable {
        /// The delivery rows written (one per key).
        var written: [DeliveryRecord] = []
        /// Rows PostgreSQL refused, each recorded as a `write_failed` rejection.
        var refused = 0
    }

    /// `write`, waiting out a database outage, with an outcome PostgreSQL
    /// refuses with a data error bisected until the row behind it is found:
    /// that row becomes a `write_failed` rejection (naming the message it came
    /// from) and every other row is written. Errors other than data errors
    /// and outages propagate.
    func writeIsolating(_ outcome: BatchOutcome) async throws -> IsolatedWrite {
        do {
            return IsolatedWrite(written: try await outages.run("write outcomes") { try await self.write(outcome) })
        } catch let error as PostgresError where error.isDataError {
            if let (first, second) = outcome.splitRows() {
                logger.warning("outcome write refused by PostgreSQL; isolating the row behind it", metadata: [
                    "worker.rows": "\(outcome.rowCount)", "error": "\(error)",
                ])
                let a = try await writeIsolating(first)
                let b = try await writeIsolating(second)
                return IsolatedWrite(written: a.written + b.written, refused: a.refused + b.refused)
            }
            logger.error("outcome row refused by PostgreSQL; recorded as write_failed", metadata: ["error": "\(error)"])
            guard let rejection = outcome.refusedRowRejection(error) else { return IsolatedWrite(refused: 1) }
            let replacement = BatchOutcome(rejections: [rejection])
            do {
                _ = try await outages.run("write outcomes") { try await self.write(replacement) }
            } catch let again as PostgresError where again.isDataError {
                logger.error("a refused row's rejection was refused too; only this log has it",
                             metadata: ["error": "\(again)", "worker.rejection": "\(rejection.reason)"])
            }
            return IsolatedWrite(refused: 1)
        }
    }
}
