import CCurl
import CShims

/// One request in flight: its continuation, the response being collected,
/// and the C memory curl points into (header list, body copy, error buffer),
/// all freed in `deinit` after curl has let go of them.
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
    var continuation: CheckedContinuation<HTTPResponse, any Error>?

    // Loop thread only.
    var easy: CurlEasyHandle?
    var status = 0
    var statusReceived = false
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []

    // C memory curl refers to while the transfer runs.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let bodyBuffer: UnsafeMutableRawBufferPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// The +1 reference handed to curl as WRITEDATA / HEADERDATA / PRIVATE.
    private var curlReference: Unmanaged<Transfer>?

    init(request: HTTPRequest) {
        self.request = request
        self.hostKey = Self.hostKey(of: request.url)
        self.bodyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.body.count), alignment: 1)
        if !request.body.isEmpty { bodyBuffer.copyBytes(from: request.body) }
        self.errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        bodyBuffer.deallocate()
        errorBuffer.deallocate()
    }

    /// Retains `self` for curl's callbacks and returns the context pointer.
    func retainForCurl() -> UnsafeMutableRawPointer {
        if let curlReference { return curlReference.toOpaque() }
        let reference = Unmanaged.passRetained(self)
        curlReference = reference
        return reference.toOpaque()
    }

    /// Balances `retainForCurl()`; safe to call more than once.
    func releaseFromCurl() {
        curlReference?.release()
        curlReference = nil
    }

    /// Resumes the caller exactly once.
    func resume(with result: Result<HTTPResponse, HTTPError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    static func hostKey(of url: String) -> String {
        let lower = url.lowercased()
        guard let scheme = lower.range(of: "://") else { return lower }
        let rest = lower[scheme.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        return String(lower[..<end])
    }

    var errorBufferText: String { String(cString: errorBuffer) }

    /// Sets every option for this request on a fresh (reset) easy handle.
    func configure(_ easy: CurlEasyHandle, _ configuration: HTTPClientConfiguration) throws(HTTPError) {
        let context = retainForCurl()
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_NOSIGNAL, 1)
        if configuration.verbose { try easy.set(CURLOPT_VERBOSE, 1) }
        try easy.set(CURLOPT_HTTP_VERSION, CShims_CURL_HTTP_VERSION_2TLS())
        try easy.set(CURLOPT_PIPEWAIT, 1)
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        try easy.set(CURLOPT_TCP_KEEPIDLE, 30)
        try easy.set(CURLOPT_TCP_KEEPINTVL, 15)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_ERRORBUFFER, pointer: UnsafeRawPointer(errorBuffer))
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, configuration.connectTimeout.curlMilliseconds))
        try easy.set(CURLOPT_TIMEOUT_MS, max(1, configuration.requestTimeout.curlMilliseconds))
        if let ca = configuration.caBundlePath { try easy.set(CURLOPT_CAINFO, ca) }
        if let proxy = configuration.proxy {
            try easy.set(CURLOPT_PROXY, proxy)
            try easy.set(CURLOPT_HTTPPROXYTUNNEL, 1)
        }
        if let cert = configuration.clientCertificatePath { try easy.set(CURLOPT_SSLCERT, cert) }
        if let type = configuration.clientCertificateType { try easy.set(CURLOPT_SSLCERTTYPE, type) }
        if let key = configuration.clientKeyPath { try easy.set(CURLOPT_SSLKEY, key) }
        if let password = configuration.clientKeyPassword { try easy.set(CURLOPT_KEYPASSWD, password) }
        try easy.set(CURLOPT_WRITEFUNCTION, function: transferWriteCallback)
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.set(CURLOPT_HEADERFUNCTION, function: transferHeaderCallback)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        try easy.set(CURLOPT_PRIVATE, pointer: context)
        try configureMethodAndBody(easy)
        try configureHeaders(easy)
    }

    private func configureMethodAndBody(_ easy: CurlEasyHandle) throws(HTTPError) {
        let method = request.method.uppercased()
        if method == "GET" && request.body.isEmpty {
            try easy.set(CURLOPT_HTTPGET, 1)
            return
        }
        if method == "HEAD" {
            try easy.set(CURLOPT_NOBODY, 1)
            return
        }
        // POSTFIELDS points at `bodyBuffer`, which lives until `deinit`.
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offT: Int64(request.body.count))
        try easy.set(CURLOPT_POSTFIELDS, pointer: UnsafeRawPointer(bodyBuffer.baseAddress))
        if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
    }

    private func configureHeaders(_ easy: CurlEasyHandle) throws(HTTPError) {
        var lines = request.headers.map { "\($0.name): \($0.value)" }
        let names = Set(request.headers.map { $0.name.lowercased() })
        // Drop curl's defaults we did not ask for.
        if !names.contains("content-type") { lines.append("Content-Type:") }
        if !names.contains("accept") { lines.append("Accept:") }
        lines.append("Expect:")
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                throw HTTPError.setup(code: 0, "curl_slist_append failed (out of memory)")
            }
            headerList = appended
        }
        try easy.set(CURLOPT_HTTPHEADER, pointer: UnsafeRawPointer(headerList))
    }

    /// One header line from curl (status line, header, or the blank end line).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        // Trim CR/LF as bytes: "\r\n" is one Character in Swift.
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = Substring(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new response head (an interim 1xx may come first): start over.
            headers.removeAll(keepingCapacity: true)
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            if status >= 200 { statusReceived = true }
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingSpaces()
        headers.append((name: name, value: value))
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// CURLOPT_WRITEFUNCTION: appends body bytes to the transfer in `context`.
private let transferWriteCallback: curl_write_callback = { buffer, size, count, context in
    let length = size * count
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let buffer, length > 0 {
        transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: length))
    }
    return length
}

/// CURLOPT_HEADERFUNCTION: parses one header line into the transfer in `context`.
private let transferHeaderCallback: curl_write_callback = { buffer, size, count, context in
    let length = size * count
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let buffer, length > 0 {
        transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length))
    }
    return length
}
