import CShims

/// One connection curl put a request of ours on, as the engine sees it
/// (loop thread only).
///
/// A connection is *settled* once any response arrived on it: a server's
/// first frame is its SETTINGS, so from then on curl knows the server's
/// MAX_CONCURRENT_STREAMS and never opens more streams than it allows (nor
/// more than `CURLMOPT_MAX_CONCURRENT_STREAMS`). Before that, libcurl 7.88 and
/// nghttp2 assume 100, so an unsettled connection carries one request only.
final class ConnectionSlot {
    /// Ports and remote address (`ConnectionBook.key`).
    let key: Int
    /// The socket, for its TCP state (-1 if curl did not report it).
    let fd: Int32
    /// `scheme://host[:port]` of the requests it carries.
    let hostKey: String
    unowned let book: ConnectionBook
    /// A response arrived on it (the server's SETTINGS are known to curl).
    private(set) var settled = false
    /// Requests curl placed on it that have not ended or moved on.
    var inUse = 0
    /// curl closed the socket.
    private(set) var closed = false
    /// The peer reset the TCP connection (an RST arrived) before curl closed it.
    private var resetSeenAtClose = false

    init(key: Int, fd: Int32, hostKey: String, book: ConnectionBook) {
        self.key = key
        self.fd = fd
        self.hostKey = hostKey
        self.book = book
    }

    /// A response (or interim response) arrived on the connection.
    func settle() {
        guard !settled, !closed else { return }
        settled = true
        book.settled(self)
    }

    /// Whether the peer reset the connection (RST), now or before it closed.
    /// A GOAWAY ends a connection without one; a reset (or a crash) with one.
    var wasReset: Bool {
        if closed { return resetSeenAtClose }
        return fd >= 0 && CShims_tcp_peer_reset(fd) == 1
    }

    func markClosed() {
        resetSeenAtClose = fd >= 0 && CShims_tcp_peer_reset(fd) == 1
        closed = true
    }
}

/// The connections of one multi handle that carried requests, keyed by
/// local and remote port, with how many of them per host are settled
/// (loop thread only: the callbacks that feed it run inside curl calls on it).
final class ConnectionBook {
    private var slots: [Int: ConnectionSlot] = [:]
    /// Settled, open connections per host.
    private(set) var settledByHost: [String: Int] = [:]
    /// Hosts whose settled connections changed since `takeChanges()`.
    private var changed: [String] = []
    /// Whether `changed` has anything (a plain flag for the loop's check).
    private(set) var hasChanges = false
    /// The connection sockets curl reported (`CorkedSockets`), to find a new slot's socket.
    unowned(unsafe) var sockets: CorkedSockets?

    /// The slot of the connection a request is about to be sent on.
    func slot(localPort: Int, remotePort: Int, remoteIPHash: Int = 0, hostKey: String) -> ConnectionSlot {
        // One local port may serve connections to several remote addresses.
        let key = (localPort & 0xFFFF) | (remotePort & 0xFFFF) << 16 | remoteIPHash << 32
        if let existing = slots[key], !existing.closed { return existing }
        let slot = ConnectionSlot(key: key, fd: socket(localPort: localPort, remotePort: remotePort), hostKey: hostKey, book: self)
        slots[key] = slot
        return slot
    }

    /// FNV-1a of a NUL-terminated address text, in 31 bits (0 for none).
    static func hash(_ text: UnsafePointer<CChar>?) -> Int {
        guard var byte = text else { return 0 }
        var hash: UInt32 = 2_166_136_261
        var length = 0
        while byte.pointee != 0, length < 64 {
            hash = (hash ^ UInt32(UInt8(bitPattern: byte.pointee))) &* 16_777_619
            byte += 1
            length += 1
        }
        return Int(hash & 0x7FFF_FFFF)
    }

    /// The socket with these ports among those curl reported (once per connection).
    private func socket(localPort: Int, remotePort: Int) -> Int32 {
        guard let sockets else { return -1 }
        for fd in sockets.sockets {
            var local: Int32 = 0
            var remote: Int32 = 0
            if CShims_socket_ports(fd, &local, &remote) == 0, Int(local) == localPort, Int(remote) == remotePort {
                return fd
            }
        }
        return -1
    }

    func settled(_ slot: ConnectionSlot) {
        settledByHost[slot.hostKey, default: 0] += 1
        note(slot.hostKey)
    }

    /// curl is closing `fd`: its slot (if any) is gone.
    func socketClosing(_ fd: Int32) {
        guard !slots.isEmpty, let slot = slots.values.first(where: { $0.fd == fd }) else { return }
        slots.removeValue(forKey: slot.key)
        slot.markClosed()
        if slot.settled {
            let count = (settledByHost[slot.hostKey] ?? 1) - 1
            settledByHost[slot.hostKey] = count > 0 ? count : nil
        }
        note(slot.hostKey)
    }

    /// Settled connections of `host` now open.
    func settledConnections(_ host: String) -> Int { settledByHost[host] ?? 0 }

    /// The hosts whose connections changed, once.
    func takeChanges() -> [String] {
        defer {
            changed.removeAll(keepingCapacity: true)
            hasChanges = false
        }
        return changed
    }

    private func note(_ host: String) {
        if !changed.contains(host) { changed.append(host) }
        hasChanges = true
    }

    /// Connections known (tests).
    var count: Int { slots.count }
}
