import CCurl

/// The libcurl this process loaded, and the HTTP/2 and TLS libraries it uses.
public enum CurlLibrary {
    /// libcurl's version, e.g. `7.88.1`.
    public static var version: String { info { $0.version.map { String(cString: $0) } } ?? "unknown" }

    /// The nghttp2 libcurl speaks HTTP/2 with, e.g. `1.52.0` (nil: built without HTTP/2).
    public static var nghttp2Version: String? {
        info { data in
            guard data.age.rawValue >= CURLVERSION_SIXTH.rawValue else { return nil }
            return data.nghttp2_version.map { String(cString: $0) }
        }
    }

    /// The TLS library libcurl was built with, as it names it, e.g. `OpenSSL/3.0.15`.
    public static var tlsVersion: String? { info { $0.ssl_version.map { String(cString: $0) } } }

    private static func info<T>(_ read: (curl_version_info_data) -> T?) -> T? {
        guard let data = curl_version_info(CURLVERSION_SIXTH) else { return nil }
        return read(data.pointee)
    }
}
