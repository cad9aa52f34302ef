import PushCore

/// Wakes the poll loop when a batch finishes. At the in-flight bound the loop
/// waits here for room instead of pausing partitions: a librdkafka pause
/// throws away the messages it already fetched, and the resume then waits for
/// a new fetch, so pausing at every bound made a backlog run mostly idle.
final class BatchCompletionSignal: Sendable {
    private let state = Locked<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// A batch completed or was abandoned (its offsets left the dispatched set).
    func fire() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else {
                s.pending = true
                return nil
            }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns at the first `fire()` since the previous wait, or after
    /// `timeout`. A wake-up may be spurious: the caller re-checks its condition.
    func wait(timeout: Duration) async {
        let timer = Task { [self] in
            // Cancelled once the wait is over: no fire then (it would wake the next wait).
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.fire()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.pending {
                    s.pending = false
                    return true
                }
                s.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        timer.cancel()
    }
}
