/// Per-host admission to the multi handle (loop thread only).
///
/// At most `limit` (= connections per host × streams per connection)
/// transfers per host are handed to curl; the rest wait here in FIFO order.
/// libcurl 7.88 handles transfers it must queue itself (all streams busy)
/// badly: under load such "pending" transfers lead to bursts of RST_STREAM
/// frames on already-closed streams, which servers with rapid-reset
/// protection (swift-nio-http2 allows 200 per 30 s) answer by closing the
/// connection. Queueing here avoids that as long as the server allows at
/// least `maxConcurrentStreams` streams per connection.
struct HostAdmission {
    let limit: Int
    private var inFlight: [String: Int] = [:]
    private var waiting: [String: FIFO<Transfer>] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    /// Transfers per host in flight at most: connections × streams per connection.
    static func limit(for configuration: HTTPClientConfiguration) -> Int {
        let (product, overflow) = max(1, configuration.maxConnectionsPerHost)
            .multipliedReportingOverflow(by: max(1, configuration.maxConcurrentStreams))
        return overflow ? Int(Int32.max) : min(product, Int(Int32.max))
    }

    /// Whether a transfer for `host` may go to curl now; counts it if so.
    mutating func tryAdmit(_ host: String) -> Bool {
        let current = inFlight[host, default: 0]
        guard current < limit else { return false }
        inFlight[host] = current + 1
        return true
    }

    mutating func enqueue(_ transfer: Transfer) {
        waiting[transfer.hostKey, default: FIFO()].append(transfer)
    }

    /// A transfer for `host` left curl: the next waiting one, now admitted.
    mutating func release(_ host: String) -> Transfer? {
        if var queue = waiting[host], let next = queue.popFirst() {
            waiting[host] = queue.isEmpty ? nil : queue
            return next  // takes over the released slot
        }
        let current = inFlight[host, default: 1] - 1
        inFlight[host] = current > 0 ? current : nil
        return nil
    }

    /// Removes a waiting transfer (cancellation); false if it was not waiting.
    mutating func removeWaiting(_ transfer: Transfer) -> Bool {
        guard var queue = waiting[transfer.hostKey], queue.remove(transfer) else { return false }
        waiting[transfer.hostKey] = queue.isEmpty ? nil : queue
        return true
    }

    /// Everything still waiting (at shutdown).
    mutating func drainWaiting() -> [Transfer] {
        defer { waiting.removeAll() }
        return waiting.values.flatMap { $0.elements }
    }
}

/// A first-in first-out queue with O(1) amortised pop.
struct FIFO<Element: AnyObject> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var elements: ArraySlice<Element> { storage[head...] }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func remove(_ element: Element) -> Bool {
        guard let index = storage[head...].firstIndex(where: { $0 === element }) else { return false }
        storage.remove(at: index)
        return true
    }
}
