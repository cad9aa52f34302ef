import CCurl
import CShims

/// Owns one `CURL*` easy handle and its error buffer; `curl_easy_cleanup` in
/// `deinit`. Only the client's loop thread touches it.
///
/// The options that are the same for every request of a client (TLS trust,
/// timeouts, callbacks, HTTP version, …) are set once per handle
/// (`applyFixedOptions`); a request sets only its own (`Transfer.configure`).
/// A handle whose request changed anything beyond those (another method than
/// POST) is marked `needsFullReset` and starts over from `curl_easy_reset`.
final class CurlEasyHandle {
    let raw: UnsafeMutableRawPointer
    /// `CURLOPT_ERRORBUFFER`: curl writes a failure's detail here.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// `CURLOPT_BUFFERSIZE` (curl's default is 16 KiB).
    static let receiveBufferBytes = 4096
    /// `CURLOPT_UPLOAD_BUFFERSIZE` (default 64 KiB; curl's minimum is 16 KiB).
    static let uploadBufferBytes = 16384
    /// Set when the last request left options other than the per-request ones.
    var needsFullReset = false

    init() throws(HTTPError) {
        guard let raw = curl_easy_init() else {
            throw HTTPError.setup(code: 0, "curl_easy_init returned NULL")
        }
        self.raw = raw
        errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Back to a fresh state for reuse (keeps the multi's connection cache).
    func reset() {
        curl_easy_reset(raw)
        needsFullReset = false
    }

    /// The error buffer's text (empty when curl wrote none).
    var errorText: String { String(cString: errorBuffer) }

    /// Sets the options every request of a client shares, on a new or reset handle.
    func applyFixedOptions(_ configuration: HTTPClientConfiguration) throws(HTTPError) {
        try set(CURLOPT_NOSIGNAL, 1)
        if configuration.verbose { try set(CURLOPT_VERBOSE, 1) }
        try set(CURLOPT_HTTP_VERSION, CShims_CURL_HTTP_VERSION_2TLS())
        try set(CURLOPT_PIPEWAIT, 1)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_TCP_KEEPIDLE, 30)
        try set(CURLOPT_TCP_KEEPINTVL, 15)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Every handle in flight holds a receive and an upload buffer (16 KiB
        // and 64 KiB by default): 10,000 requests in flight would pin ~800 MB.
        // Push answers and bodies are a few KiB at most; curl still handles
        // anything larger in several reads.
        try set(CURLOPT_BUFFERSIZE, Self.receiveBufferBytes)
        try set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferBytes)
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeRawPointer(errorBuffer))
        try set(CURLOPT_CONNECTTIMEOUT_MS, max(1, configuration.connectTimeout.curlMilliseconds))
        try set(CURLOPT_TIMEOUT_MS, max(1, configuration.requestTimeout.curlMilliseconds))
        if let ca = configuration.caBundlePath { try set(CURLOPT_CAINFO, ca) }
        if let proxy = configuration.proxy {
            try set(CURLOPT_PROXY, proxy)
            try set(CURLOPT_HTTPPROXYTUNNEL, 1)
        }
        if let cert = configuration.clientCertificatePath { try set(CURLOPT_SSLCERT, cert) }
        if let type = configuration.clientCertificateType { try set(CURLOPT_SSLCERTTYPE, type) }
        if let key = configuration.clientKeyPath { try set(CURLOPT_SSLKEY, key) }
        if let password = configuration.clientKeyPassword { try set(CURLOPT_KEYPASSWD, password) }
    }

    func set(_ option: CURLoption, _ value: Int, file: String = #fileID, line: Int = #line) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_long(raw, option, value), option, file: file, line: line)
    }

    func set(_ option: CURLoption, _ value: String, file: String = #fileID, line: Int = #line) throws(HTTPError) {
        // curl copies string options (since 7.17), so a temporary C string is fine.
        let code = value.withCString { CShims_curl_easy_setopt_ptr(raw, option, $0) }
        try check(code, option, file: file, line: line)
    }

    func set(
        _ option: CURLoption, pointer: UnsafeRawPointer?, file: String = #fileID, line: Int = #line
    ) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_ptr(raw, option, pointer), option, file: file, line: line)
    }

    func set(_ option: CURLoption, offT value: Int64, file: String = #fileID, line: Int = #line) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_off_t(raw, option, curl_off_t(value)), option, file: file, line: line)
    }

    func set(
        _ option: CURLoption, function: curl_write_callback, file: String = #fileID, line: Int = #line
    ) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_func(raw, option, function), option, file: file, line: line)
    }

    func set(
        _ option: CURLoption, sockopt function: curl_sockopt_callback, file: String = #fileID, line: Int = #line
    ) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_sockopt(raw, option, function), option, file: file, line: line)
    }

    func set(
        _ option: CURLoption, closesocket function: curl_closesocket_callback, file: String = #fileID, line: Int = #line
    ) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_closesocket(raw, option, function), option, file: file, line: line)
    }

    func set(
        _ option: CURLoption, prereq function: curl_prereq_callback, file: String = #fileID, line: Int = #line
    ) throws(HTTPError) {
        try check(CShims_curl_easy_setopt_prereq(raw, option, function), option, file: file, line: line)
    }

    func infoLong(_ info: CURLINFO) -> Int {
        var value = 0
        return CShims_curl_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    func infoPointer(_ info: CURLINFO) -> UnsafeMutableRawPointer? {
        var value: UnsafeMutableRawPointer?
        return CShims_curl_easy_getinfo_ptr(raw, info, &value) == CURLE_OK ? value : nil
    }

    private func check(_ code: CURLcode, _ option: CURLoption, file: String, line: Int) throws(HTTPError) {
        guard code != CURLE_OK else { return }
        throw HTTPError.setup(
            code: Int32(bitPattern: code.rawValue), "curl_easy_setopt(\(option.rawValue))", file: file, line: line)
    }
}
