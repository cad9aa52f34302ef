import CCurl
import CShims

/// Owns one `CURLM*` multi handle; `curl_multi_cleanup` in `deinit`.
/// Only the client's loop thread uses it, except `wakeup()`, which libcurl
/// documents as callable from any thread.
final class CurlMultiHandle: @unchecked Sendable {
    // @unchecked Sendable: the handle is only used from the loop thread, apart
    // from `curl_multi_wakeup`, which is thread-safe by libcurl's contract.
    let raw: UnsafeMutableRawPointer
    /// The connections' sockets, corked while `perform()` runs. A stored
    /// property, so still alive while `deinit` runs `curl_multi_cleanup`, which
    /// closes the cached connections through the close-socket callback.
    let sockets = CorkedSockets()

    init(configuration: HTTPClientConfiguration) throws(HTTPError) {
        guard let raw = curl_multi_init() else {
            throw HTTPError.setup(code: 0, "curl_multi_init returned NULL")
        }
        self.raw = raw
        // From here on `deinit` frees `raw` if a setting below throws.
        try set(CURLMOPT_PIPELINING, CShims_CURLPIPE_MULTIPLEX())
        try set(CURLMOPT_MAX_HOST_CONNECTIONS, max(1, configuration.maxConnectionsPerHost))
        // Our streams per connection: curl puts a request on a connection only
        // while it carries fewer than this and fewer than the server's
        // MAX_CONCURRENT_STREAMS (once its SETTINGS arrived). The engine admits
        // at most connections × streams per host (`HostAdmission`), so curl
        // queues a transfer itself only while a second connection is being set
        // up or when the server allows fewer streams than this.
        try set(CURLMOPT_MAX_CONCURRENT_STREAMS, max(1, configuration.maxConcurrentStreams))
        // Keep enough idle connections cached so none is closed for lack of room.
        try set(CURLMOPT_MAXCONNECTS, max(4, configuration.maxConnectionsPerHost * 4))
    }

    deinit { curl_multi_cleanup(raw) }

    func set(_ option: CURLMoption, _ value: Int) throws(HTTPError) {
        let code = CShims_curl_multi_setopt_long(raw, option, value)
        if code != CURLM_OK { throw HTTPError.multi(code: code.rawValue, "curl_multi_setopt(\(option.rawValue))") }
    }

    func add(_ easy: CurlEasyHandle) -> CURLMcode { curl_multi_add_handle(raw, easy.raw) }

    func remove(_ easy: CurlEasyHandle) { _ = curl_multi_remove_handle(raw, easy.raw) }

    /// Drives all transfers as far as they can go without blocking.
    /// The frames curl writes meanwhile leave together when it returns.
    func perform() -> CURLMcode {
        var running: Int32 = 0
        sockets.cork()
        defer { sockets.uncork() }
        return curl_multi_perform(raw, &running)
    }

    /// Blocks until there is socket activity, curl's own timeout, `timeoutMs`
    /// or a `wakeup()` from another thread.
    func poll(timeoutMs: Int32) -> CURLMcode {
        var numfds: Int32 = 0
        return curl_multi_poll(raw, nil, 0, timeoutMs, &numfds)
    }

    func wakeup() { _ = curl_multi_wakeup(raw) }

    /// The next finished transfer: its easy handle pointer and result code.
    func nextDone() -> (easy: UnsafeMutableRawPointer, code: CURLcode)? {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(raw, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            return (easy, CShims_curl_msg_result(message))
        }
        return nil
    }
}
