import CLibpq

extension PostgresConnection {
    /// Reads whatever the server sent while the connection sat idle, so a
    /// terminated backend or a closed socket is noticed before the next
    /// command. Cheap: no round trip. False if the connection is unusable.
    func checkAlive() async -> Bool {
        guard !status.isBroken else { return false }
        let alive = try? await executor.run { [self] () -> Bool in
            guard let conn = handle else { return false }
            // A terminated backend sends a FATAL message, then closes the
            // socket: the first read may only get the message, the second sees EOF.
            if PQconsumeInput(conn) != 0 {
                _ = PQconsumeInput(conn)
            }
            // Parsing the input while idle hands an unsolicited FATAL error to
            // the notice receiver, even before the socket closes.
            _ = PQisBusy(conn)
            return refreshStatus(conn)
        }
        return alive ?? false
    }
}

extension PostgresConnection {
    /// Records health and transaction state after a libpq call (executor thread only).
    @discardableResult
    func refreshStatus(_ conn: OpaquePointer) -> Bool {
        let fatal = noticeSink.map { $0.takeUnretainedValue().sawFatal } ?? false
        let ok = PQstatus(conn) == CONNECTION_OK && !fatal
        status.update(ok: ok, inTransaction: PQtransactionStatus(conn) != PQTRANS_IDLE)
        return ok
    }
}
