/// A gate a request passes right before it goes out, which its owner can
/// close at any moment from elsewhere. The provider clients look at it after
/// every wait on the way (a rate-limit slot, an access token), so a request
/// that was waiting when the gate closed is not sent. The worker keeps one
/// per campaign in flight and closes it when the campaign is cancelled; why
/// it closed travels with it, for the row of what was not sent.
public final class SendGate: Sendable {
    private let reason: Locked<String?>

    /// An open gate, or one closed already for `reason`.
    public init(closedBecause reason: String? = nil) {
        self.reason = Locked(reason)
    }

    /// Why the gate is closed; nil while it is open.
    public var closedReason: String? { reason.withLock { $0 } }

    /// Closes the gate (again, with a new reason, if it was closed).
    public func close(because reason: String) {
        self.reason.withLock { $0 = reason }
    }

    /// Opens the gate.
    public func open() {
        reason.withLock { $0 = nil }
    }
}
