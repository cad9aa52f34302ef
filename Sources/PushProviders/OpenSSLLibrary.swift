import COpenSSL

/// The OpenSSL (libcrypto) this process loaded: the one provider credentials
/// are signed with (and, on Debian, the one libcurl's TLS uses).
public enum OpenSSLLibrary {
    /// Its version, e.g. `3.0.15` (`OpenSSL_version(OPENSSL_VERSION_STRING)`).
    public static var version: String {
        OpenSSL_version(OPENSSL_VERSION_STRING).map { String(cString: $0) } ?? "unknown"
    }
}
