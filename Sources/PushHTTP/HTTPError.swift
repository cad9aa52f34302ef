import CCurl

/// A request that ended without a complete HTTP response.
public struct HTTPError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is.
    public enum Kind: Sendable, Equatable {
        /// curl ended the transfer with an error (`curlCode` says which).
        case transfer
        /// The client could not set the request up (bad option, bad URL …).
        case setup
        /// The multi handle failed (`curlCode` holds the `CURLMcode`).
        case multi
        /// The client was shut down before the request finished.
        case shutdown
        /// The calling task was cancelled.
        case cancelled
        /// The request's gate was closed before it went to libcurl: never sent
        /// (`message` says why).
        case withdrawn
    }

    /// The kind of failure.
    public var kind: Kind
    /// The raw `CURLcode` (or `CURLMcode` for `.multi`); 0 when curl had none.
    public var curlCode: Int32
    /// `curl_easy_strerror` plus curl's error buffer, or our own explanation.
    public var message: String
    /// Whether a final HTTP status line arrived before the failure. When
    /// `false` the server never answered, so the request can be re-sent
    /// (a GOAWAY, RST_STREAM or reset surfaces as curl codes 16, 18, 52, 55, 56 or 92).
    public var statusReceived: Bool
    /// What arrived before the failure when `statusReceived`: the status and
    /// headers (an HTTP/2 header block arrives whole) and the body so far.
    /// A 2xx here means the server accepted the request even though its
    /// answer was cut off.
    public var partialResponse: HTTPResponse? = nil
    /// Requests put on the wire for this `execute` (0: none was sent), libcurl's
    /// own re-sends included.
    public var attempts: Int = 0
    /// libcurl's own re-sends of this request before it failed, by why.
    public var resends: HTTPResends = .none
    /// Where the error was raised.
    public var file: String
    public var line: Int

    /// Transient transport failures worth retrying (connection, TLS handshake
    /// I/O, timeouts, HTTP/2 framing, shutdown). Certificate, URL and option
    /// errors are not. A retriable error with `statusReceived == true` may
    /// still have been processed by the server.
    public var isRetriable: Bool {
        switch kind {
        case .shutdown: return true
        case .setup, .multi, .cancelled, .withdrawn: return false
        case .transfer: return Self.retriableCodes.contains(curlCode)
        }
    }

    /// CURLE_COULDNT_RESOLVE_HOST 6, COULDNT_CONNECT 7, HTTP2 16, PARTIAL_FILE 18 (an
    /// HTTP/2 stream "not closed cleanly" when its connection ended), OPERATION_TIMEDOUT 28,
    /// SSL_CONNECT_ERROR 35, GOT_NOTHING 52, SEND_ERROR 55, RECV_ERROR 56, HTTP2_STREAM 92.
    static let retriableCodes: Set<Int32> = [6, 7, 16, 18, 28, 35, 52, 55, 56, 92]

    public var description: String {
        "HTTPError(\(kind), curl \(curlCode): \(message), statusReceived: \(statusReceived)) at \(file):\(line)"
    }

    /// A transfer curl ended with `code`; `detail` is the CURLOPT_ERRORBUFFER text.
    public static func transfer(
        code: Int32, detail: String, statusReceived: Bool, partialResponse: HTTPResponse? = nil,
        file: String = #fileID, line: Int = #line
    ) -> HTTPError {
        var message = String(cString: curl_easy_strerror(CURLcode(rawValue: UInt32(bitPattern: code))))
        if !detail.isEmpty && detail != message { message += ": " + detail }
        return HTTPError(
            kind: .transfer, curlCode: code, message: message, statusReceived: statusReceived,
            partialResponse: statusReceived ? partialResponse : nil, file: file, line: line)
    }

    /// Setting up a request failed (e.g. `curl_easy_setopt` returned `code`).
    public static func setup(
        code: Int32, _ what: String, file: String = #fileID, line: Int = #line
    ) -> HTTPError {
        let text = code == 0 ? what : what + ": " + String(cString: curl_easy_strerror(CURLcode(rawValue: UInt32(bitPattern: code))))
        return HTTPError(kind: .setup, curlCode: code, message: text, statusReceived: false, file: file, line: line)
    }

    /// A multi-handle call returned `code`.
    public static func multi(code: Int32, _ what: String, file: String = #fileID, line: Int = #line) -> HTTPError {
        let text = what + ": " + String(cString: curl_multi_strerror(CURLMcode(rawValue: code)))
        return HTTPError(kind: .multi, curlCode: code, message: text, statusReceived: false, file: file, line: line)
    }

    /// The client shut down before the request finished.
    public static func shutdown(statusReceived: Bool = false, file: String = #fileID, line: Int = #line) -> HTTPError {
        HTTPError(
            kind: .shutdown, curlCode: 0, message: "HTTP2Client was shut down before the request completed",
            statusReceived: statusReceived, file: file, line: line)
    }

    /// The request's gate closed before it was handed to libcurl (`reason`: why).
    public static func withdrawn(_ reason: String, file: String = #fileID, line: Int = #line) -> HTTPError {
        HTTPError(kind: .withdrawn, curlCode: 0, message: reason, statusReceived: false, file: file, line: line)
    }

    /// The calling task was cancelled.
    public static func cancelled(statusReceived: Bool = false, file: String = #fileID, line: Int = #line) -> HTTPError {
        HTTPError(
            kind: .cancelled, curlCode: 0, message: "request cancelled", statusReceived: statusReceived,
            file: file, line: line)
    }
}
