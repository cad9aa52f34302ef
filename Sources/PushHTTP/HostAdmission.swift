/// Per-host admission to the multi handle (loop thread only).
///
/// At most `limit` (= connections per host × streams per connection)
/// transfers per host are handed to curl; the rest wait here, urgent ones
/// first (`HTTPRequestPriority`), each priority in FIFO order.
/// libcurl 7.88 handles transfers it must queue itself (all streams busy)
/// badly: under load such "pending" transfers lead to bursts of RST_STREAM
/// frames on already-closed streams, which servers with rapid-reset
/// protection (swift-nio-http2 allows 200 per 30 s) answer by closing the
/// connection. Queueing here avoids that as long as the server allows at
/// least `maxConcurrentStreams` streams per connection.
///
/// A connection carries one request until the server answered on it (its
/// SETTINGS are known only then; before them libcurl and nghttp2 assume 100
/// streams): while a host has no such *settled* connection, one transfer goes
/// to curl; a transfer curl tried to put on a connection that is still
/// unsettled comes back here (`deferToFront`) and the host is held (nothing
/// new goes to curl) until its connections change (`connectionsChanged`).
struct HostAdmission {
    struct Host {
        var inFlight = 0
        /// Open connections a response arrived on.
        var settled = 0
        /// A transfer was turned back from an unsettled connection.
        var held = false
        var queue = WaitingTransfers()

        /// How many transfers curl may have now.
        func room(_ limit: Int) -> Int { held ? 0 : (settled > 0 ? limit : 1) }

        /// Nothing in curl, nothing waiting, no connection: the same as no entry.
        var isIdle: Bool { inFlight == 0 && settled == 0 && queue.isEmpty }
    }

    /// A host's waiting transfers: urgent ones first, each priority in order.
    struct WaitingTransfers {
        private var urgent = FIFO<Transfer>()
        private var background = FIFO<Transfer>()

        var isEmpty: Bool { urgent.isEmpty && background.isEmpty }
        var elements: [Transfer] { Array(urgent.elements) + Array(background.elements) }

        mutating func append(_ transfer: Transfer) {
            if transfer.request.priority == .background { background.append(transfer) } else { urgent.append(transfer) }
        }

        /// Puts `transfer` first among its priority (a transfer turned back keeps its place).
        mutating func prepend(_ transfer: Transfer) {
            if transfer.request.priority == .background { background.prepend(transfer) } else { urgent.prepend(transfer) }
        }

        mutating func popFirst() -> Transfer? { urgent.popFirst() ?? background.popFirst() }

        mutating func remove(_ transfer: Transfer) -> Bool {
            transfer.request.priority == .background ? background.remove(transfer) : urgent.remove(transfer)
        }
    }

    let limit: Int
    /// Hosts with transfers or connections; an idle one is dropped (Web Push
    /// endpoints name hosts without end, and each must not stay forever).
    private var hosts: [String: Host] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    /// Transfers per host in flight at most: connections × streams per connection.
    static func limit(for configuration: HTTPClientConfiguration) -> Int {
        let (product, overflow) = max(1, configuration.maxConnectionsPerHost)
            .multipliedReportingOverflow(by: max(1, configuration.maxConcurrentStreams))
        return overflow ? Int(Int32.max) : min(product, Int(Int32.max))
    }

    /// Whether a transfer for `host` may go to curl now; counts it if so.
    mutating func tryAdmit(_ host: String) -> Bool {
        let limit = self.limit
        return Self.admit(&hosts[host, default: Host()], limit: limit)
    }

    private static func admit(_ state: inout Host, limit: Int) -> Bool {
        guard state.queue.isEmpty, state.inFlight < state.room(limit) else { return false }
        state.inFlight += 1
        return true
    }

    mutating func enqueue(_ transfer: Transfer) {
        hosts[transfer.hostKey, default: Host()].queue.append(transfer)
    }

    /// A transfer for `host` left curl: the next waiting one, now admitted.
    mutating func release(_ host: String) -> Transfer? {
        var idle = false
        let next = Self.release(&hosts[host, default: Host()], idle: &idle)
        if idle { hosts[host] = nil }
        return next
    }

    private static func release(_ state: inout Host, idle: inout Bool) -> Transfer? {
        if let next = state.queue.popFirst() { return next }  // takes over the released slot
        state.inFlight = max(0, state.inFlight - 1)
        if state.inFlight == 0 {
            state.held = false
            idle = state.isIdle
        }
        return nil
    }

    /// curl tried to send `transfer` on a connection still waiting for its first
    /// answer: it waits at the head of its host's queue, and the host is held.
    mutating func deferToFront(_ transfer: Transfer) {
        Self.deferToFront(transfer, &hosts[transfer.hostKey, default: Host()])
    }

    private static func deferToFront(_ transfer: Transfer, _ state: inout Host) {
        state.inFlight = max(0, state.inFlight - 1)
        state.queue.prepend(transfer)
        // Held only while something of this host is in curl to end it.
        state.held = state.inFlight > 0
    }

    /// The host's settled connections changed (one answered, or one closed).
    mutating func connectionsChanged(_ host: String, settled: Int) {
        hosts[host, default: Host()].settled = settled
        hosts[host, default: Host()].held = false
        if hosts[host]?.isIdle == true { hosts[host] = nil }
    }

    /// The next waiting transfer of `host` that may go to curl now, counted.
    mutating func admitWaiting(_ host: String) -> Transfer? {
        let limit = self.limit
        return Self.admitWaiting(&hosts[host, default: Host()], limit: limit)
    }

    private static func admitWaiting(_ state: inout Host, limit: Int) -> Transfer? {
        guard state.inFlight < state.room(limit), let next = state.queue.popFirst() else { return nil }
        state.inFlight += 1
        return next
    }

    /// Removes a waiting transfer (cancellation); false if it was not waiting.
    mutating func removeWaiting(_ transfer: Transfer) -> Bool {
        guard hosts[transfer.hostKey] != nil else { return false }
        let removed = hosts[transfer.hostKey, default: Host()].queue.remove(transfer)
        if hosts[transfer.hostKey]?.isIdle == true { hosts[transfer.hostKey] = nil }
        return removed
    }

    /// Everything still waiting (at shutdown).
    mutating func drainWaiting() -> [Transfer] {
        var all: [Transfer] = []
        for host in hosts.keys {
            all.append(contentsOf: hosts[host, default: Host()].queue.elements)
            hosts[host, default: Host()].queue = WaitingTransfers()
        }
        return all
    }

    /// Transfers of `host` in curl now (tests).
    func inFlight(_ host: String) -> Int { hosts[host]?.inFlight ?? 0 }

    /// Hosts with an entry (tests).
    var hostCount: Int { hosts.count }
}

/// A first-in first-out queue with O(1) amortised pop.
struct FIFO<Element: AnyObject> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var elements: ArraySlice<Element> { storage[head...] }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Puts `element` first (a transfer turned back keeps its place).
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

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
