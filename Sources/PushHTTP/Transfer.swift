import CCurl
import CShims

/// One request in flight: its continuation, the response being collected,
/// and the C memory curl points into (header list, body copy). That memory
/// exists only while curl has the transfer: it is made when the transfer is
/// admitted to curl and freed as soon as curl lets go (`releaseFromCurl()`),
/// so the many requests that wait for a stream, or whose caller has not yet
/// run, hold none of it.
final class Transfer: @unchecked Sendable {
    // @unchecked Sendable: `phase`, `cancelRequested` and `continuation` are
    // read and written only under the engine's lock, or by the loop thread
    // after the engine lock handed the transfer over; the response fields and
    // the C buffers are touched only by the loop thread (curl callbacks run
    // inside curl_multi_perform on that thread).
    enum Phase { case new, queued, active, done }

    let request: HTTPRequest
    /// `scheme://host[:port]` of the URL: the unit of connection sharing.
    let hostKey: String
    var phase: Phase = .new
    var cancelRequested = false
    /// Unchecked: the engine's phases (new → queued → active → done, each
    /// step under its lock) let exactly one path reach `done` and resume,
    /// and `resume(with:)` drops the continuation. A checked one costs every
    /// request in flight a heap object and a larger async frame.
    var continuation: UnsafeContinuation<HTTPResponse, any Error>?

    // Loop thread only.
    var easy: CurlEasyHandle?
    var status = 0
    var statusReceived = false
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// Bytes of `headers`' names and values, against `HTTPResponse.maxHeaderBytes`.
    var headerBytes = 0
    /// What went past `HTTPResponse`'s limits (see `droppedBodyBytes`, `droppedHeaders`).
    var droppedBodyBytes = 0
    var droppedHeaders = 0
    /// Requests curl put on the wire for this transfer: its PREREQ calls that went ahead.
    var attempts = 0
    /// Of those, the re-sends libcurl made by itself, by what ended the try before.
    var resends = HTTPResends.none
    /// The connection of the latest attempt, and whether it counts in its `inUse`.
    var slot: ConnectionSlot?
    var holdsSlot = false
    /// The attempt was turned back before sending (its connection not settled yet):
    /// it goes back to the host's queue, it did not fail.
    var deferred = false
    /// The engine's connections (it outlives every transfer it runs).
    unowned(unsafe) var connections: ConnectionBook?

    // C memory curl refers to while the transfer runs.
    private var headerList: HeaderList?
    private var bodyBuffer: UnsafeMutableRawBufferPointer?

    /// The +1 reference handed to curl as WRITEDATA / HEADERDATA / PRIVATE.
    private var curlReference: Unmanaged<Transfer>?

    init(request: HTTPRequest) {
        self.request = request
        self.hostKey = Self.hostKey(of: request.url)
    }

    deinit { releaseCMemory() }

    /// Whether the header list or the body copy exists (tests).
    var holdsCMemory: Bool { headerList != nil || bodyBuffer != nil }

    /// Frees the header list and body copy; call only once curl has let go
    /// of the transfer (removed from the multi handle, handle reset or
    /// cleared). Safe to call more than once.
    func releaseCMemory() {
        headerList?.deallocate()
        headerList = nil
        bodyBuffer?.deallocate()
        bodyBuffer = nil
    }

    /// Retains `self` for curl's callbacks and returns the context pointer.
    func retainForCurl() -> UnsafeMutableRawPointer {
        if let curlReference { return curlReference.toOpaque() }
        let reference = Unmanaged.passRetained(self)
        curlReference = reference
        return reference.toOpaque()
    }

    /// Curl has let go of the transfer (removed from the multi handle, or
    /// never added): frees its C memory and balances `retainForCurl()`.
    /// Safe to call more than once.
    func releaseFromCurl() {
        releaseCMemory()
        curlReference?.release()
        curlReference = nil
    }

    /// Resumes the caller exactly once.
    func resume(with result: Result<HTTPResponse, HTTPError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    /// `scheme://host[:port]`, lower-cased, of `url` (the whole URL lower-cased
    /// if it has no scheme). Lower-cases only that prefix.
    static func hostKey(of url: String) -> String {
        // A byte scan: `firstRange(of:)` goes through the generic string-processing
        // search, which was 2.6 % of a worker's CPU at full rate.
        var url = url
        return url.withUTF8 { bytes in
            let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
            var i = 0
            while i + 2 < bytes.count, !(bytes[i] == colon && bytes[i + 1] == slash && bytes[i + 2] == slash) { i += 1 }
            guard i + 2 < bytes.count else { return String(decoding: bytes, as: UTF8.self).lowercased() }
            var end = i + 3
            while end < bytes.count, bytes[end] != slash, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
            let prefix = UnsafeBufferPointer(rebasing: bytes[..<end])
            let text = String(decoding: prefix, as: UTF8.self)
            return prefix.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? text.lowercased() : text
        }
    }

    /// Sets this request's own options on a handle that carries the client's
    /// fixed ones (`CurlEasyHandle.applyFixedOptions`).
    func configure(_ easy: CurlEasyHandle, connections: ConnectionBook) throws(HTTPError) {
        let context = retainForCurl()
        self.connections = connections
        easy.errorBuffer[0] = 0
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        try easy.set(CURLOPT_PRIVATE, pointer: context)
        try easy.set(CURLOPT_PREREQDATA, pointer: context)
        try configureMethodAndBody(easy)
        try configureHeaders(easy)
    }

    private func configureMethodAndBody(_ easy: CurlEasyHandle) throws(HTTPError) {
        // POST is the hot path and the handle's resting state; anything else
        // leaves options a later POST must not inherit, so the handle is reset
        // before its next use.
        let isPOST = request.method == "POST" || request.method.uppercased() == "POST"
        if !isPOST {
            easy.needsFullReset = true
            let method = request.method.uppercased()
            if method == "GET" && request.body.isEmpty {
                try easy.set(CURLOPT_HTTPGET, 1)
                return
            }
            if method == "HEAD" {
                try easy.set(CURLOPT_NOBODY, 1)
                return
            }
        }
        // POSTFIELDS points at `bodyBuffer`, which lives until `releaseFromCurl()`.
        bodyBuffer?.deallocate()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.body.count), alignment: 1)
        if !request.body.isEmpty { buffer.copyBytes(from: request.body) }
        bodyBuffer = buffer
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offT: Int64(request.body.count))
        try easy.set(CURLOPT_POSTFIELDS, pointer: UnsafeRawPointer(buffer.baseAddress))
        if !isPOST { try easy.set(CURLOPT_CUSTOMREQUEST, request.method.uppercased()) }
    }

    private func configureHeaders(_ easy: CurlEasyHandle) throws(HTTPError) {
        headerList?.deallocate()
        headerList = nil
        let list = HeaderList(request.headers)
        // libcurl splits a header line at CR or LF and ends it at NUL, so such a
        // byte would send a header nobody asked for, or a cut one: not sent at all.
        guard list.isSendable else {
            list.deallocate()
            throw HTTPError.setup(code: 0, "a header name or value has a CR, LF or NUL byte; not sent")
        }
        headerList = list
        try easy.set(CURLOPT_HTTPHEADER, pointer: UnsafeRawPointer(list.head))
    }
}
