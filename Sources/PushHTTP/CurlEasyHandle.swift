import CCurl
import CShims

/// Owns one `CURL*` easy handle; `curl_easy_cleanup` in `deinit`.
/// Only the client's loop thread touches it.
final class CurlEasyHandle {
    let raw: UnsafeMutableRawPointer

    init() throws(HTTPError) {
        guard let raw = curl_easy_init() else {
            throw HTTPError.setup(code: 0, "curl_easy_init returned NULL")
        }
        self.raw = raw
    }

    deinit { curl_easy_cleanup(raw) }

    /// Back to a fresh state for reuse (keeps the multi's connection cache).
    func reset() { curl_easy_reset(raw) }

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
