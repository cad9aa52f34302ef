/// Decides when a submitter must wake the curl loop (engine lock held).
///
/// The loop takes the whole queue, performs, then blocks in `curl_multi_poll`.
/// Only the first piece of work queued after a take needs `curl_multi_wakeup`:
/// that wake-up stays pending until the loop's next poll, and the loop takes
/// the queue again before it polls once more, so later work queued before
/// that take rides along. One write(2) and one early poll return per batch
/// instead of per request.
struct WakeupGate {
    private var armed = false
    /// Wake-ups asked for so far.
    private(set) var sent = 0

    /// Work was queued: true if the caller must call `curl_multi_wakeup`.
    mutating func queued() -> Bool {
        if armed { return false }
        armed = true
        sent += 1
        return true
    }

    /// The loop took the queue: the next work queued needs a wake-up again.
    mutating func taken() { armed = false }
}
