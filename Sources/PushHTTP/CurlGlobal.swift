import CCurl
import CShims

/// `curl_global_init` runs once per process: Swift initialises a global `let`
/// lazily and exactly once, under a lock, on first use.
private let curlGlobalInitCode: Int32 = Int32(bitPattern: CShims_curl_global_init_default().rawValue)

enum CurlGlobal {
    /// Initialises libcurl once; throws if that failed.
    static func ensureInitialised() throws(HTTPError) {
        let code = curlGlobalInitCode
        if code != 0 { throw HTTPError.setup(code: code, "curl_global_init failed") }
    }
}
