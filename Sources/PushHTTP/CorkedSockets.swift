import CCurl
import CShims

#if canImport(Glibc)
import Glibc
#endif

/// The TCP sockets of one multi handle's connections, corked (`TCP_CORK`)
/// while `curl_multi_perform` runs and uncorked right after it.
///
/// libcurl 7.88 writes every HTTP/2 frame batch of every transfer with its own
/// `send`: a HEADERS and a DATA write per request, plus WINDOW_UPDATEs. Each
/// became a TCP segment of its own, which costs both ends a transmit and a
/// wake-up per write. Corked during one perform, all the frames curl writes
/// for that batch of transfers leave as a few full segments when the perform
/// returns. Nothing is ever held while the loop waits in `curl_multi_poll`:
/// the sockets are uncorked before it.
///
/// curl reports each socket it opens (`CURLOPT_SOCKOPTFUNCTION`) and closes
/// (`CURLOPT_CLOSESOCKETFUNCTION`, which then closes it), so only live
/// sockets of this handle are ever touched. Loop thread only (the callbacks
/// run inside curl calls on that thread, or in `curl_multi_cleanup` after it stopped).
final class CorkedSockets {
    private(set) var sockets: [Int32] = []
    /// The connections that carried requests; told when their socket closes.
    let connections = ConnectionBook()

    init() { connections.sockets = self }

    /// The context pointer for the callbacks; valid while `self` lives (the
    /// multi handle owns it and outlives every transfer and connection).
    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func opened(_ fd: Int32) {
        if !sockets.contains(fd) { sockets.append(fd) }
    }

    func closed(_ fd: Int32) {
        connections.socketClosing(fd)
        sockets.removeAll { $0 == fd }
    }

    /// Holds partial segments from now on.
    func cork() {
        for fd in sockets { _ = CShims_tcp_cork(fd, 1) }
    }

    /// Sends what is held and stops holding.
    func uncork() {
        for fd in sockets { _ = CShims_tcp_cork(fd, 0) }
    }
}

/// CURLOPT_SOCKOPTFUNCTION: records a new connection socket.
let corkedSocketOpened: curl_sockopt_callback = { context, fd, purpose in
    if let context, purpose == CURLSOCKTYPE_IPCXN {
        Unmanaged<CorkedSockets>.fromOpaque(context).takeUnretainedValue().opened(fd)
    }
    return CURL_SOCKOPT_OK
}

/// CURLOPT_CLOSESOCKETFUNCTION: forgets the socket and closes it, as curl would.
let corkedSocketClosed: curl_closesocket_callback = { context, fd in
    if let context { Unmanaged<CorkedSockets>.fromOpaque(context).takeUnretainedValue().closed(fd) }
    return close(fd)
}
