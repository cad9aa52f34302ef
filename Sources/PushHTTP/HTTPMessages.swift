/// One HTTP request for `HTTP2Client.execute(_:)`.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// Absolute URL, e.g. `https://api.push.apple.com/3/device/<token>`.
    public var url: String
    /// Request headers in the order they are sent.
    public var headers: [(name: String, value: String)]
    /// Request body; empty for none.
    public var body: [UInt8]
    /// Looked at right before the request is handed to libcurl, after any
    /// wait for a stream slot: closed, the request is not sent (`HTTPError`
    /// `.withdrawn`). nil: always sent.
    public var gate: (any HTTPRequestGate)?
    /// Whether the request waits behind others for a stream slot of its host.
    public var priority: HTTPRequestPriority

    /// A request; `body` defaults to empty and `headers` to none.
    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                gate: (any HTTPRequestGate)? = nil, priority: HTTPRequestPriority = .urgent) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.gate = gate
        self.priority = priority
    }
}

/// The order in which a host's requests waiting for a stream slot go to
/// libcurl once one frees: every waiting urgent request before any waiting
/// background one, each kind in arrival order. A host's slots are few (its
/// connections × streams per connection), and a campaign fills them: its
/// requests wait behind the one-time code, not the other way round.
public enum HTTPRequestPriority: Sendable, Equatable {
    /// Someone waits for it now (the default).
    case urgent
    /// Bulk work: waits while urgent requests of its host wait.
    case background
}

/// Lets a request's owner withdraw it while it still waits in the client (for
/// a stream slot of its host: with many requests in flight that can take
/// seconds). The client asks it once, on its loop thread, right before the
/// request goes to libcurl; a request already handed over is not withdrawn.
public protocol HTTPRequestGate: AnyObject, Sendable {
    /// Why the request must not go; nil to let it go.
    var closedReason: String? { get }
}

/// The HTTP version a response arrived over.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0, http1_1, http2, http3, unknown
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    /// The final HTTP status code.
    public var status: Int
    /// Headers of the final response, names lower-cased, in arrival order.
    public var headers: [(name: String, value: String)]
    /// The response body.
    public var body: [UInt8]
    /// The protocol the response came over (expect `.http2` for https).
    public var httpVersion: HTTPVersion
    /// The local TCP port of the connection that carried it: a diagnostic that
    /// shows which responses shared a connection.
    public var localPort: Int
    /// libcurl's own re-sends of this request, by why.
    public var resends: HTTPResends = .none
    /// Body bytes the server sent past `HTTPResponse.maxBodyBytes`, read and
    /// dropped (`body` holds the first `maxBodyBytes`); 0 for every answer
    /// APNs, FCM or Huawei give.
    public var droppedBodyBytes = 0
    /// Header lines past `HTTPResponse.maxHeaders` (or past `maxHeaderBytes`
    /// in all), read and dropped.
    public var droppedHeaders = 0
    /// A response body is kept up to this many bytes. The providers' answers
    /// are JSON of a few hundred bytes; a server that sends more (broken, or
    /// hostile) must not make a worker hold megabytes for each of its
    /// streams in flight. The rest is read, so the stream ends normally.
    public static let maxBodyBytes = 64 * 1024
    /// At most this many header lines of a response are kept …
    public static let maxHeaders = 100
    /// … and at most this many bytes of names and values in all.
    public static let maxHeaderBytes = 64 * 1024
    /// Requests put on the wire for this `execute`: 1, plus libcurl's own re-sends.
    public var attempts: Int { 1 + resends.total }

    public init(
        status: Int, headers: [(name: String, value: String)], body: [UInt8],
        httpVersion: HTTPVersion, localPort: Int = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.localPort = localPort
    }

    /// The value of the first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first(where: { $0.name == lower })?.value
    }
}

/// Counters of an `HTTP2Client` since it started.
public struct HTTPClientStats: Sendable, Equatable {
    /// Requests handed to `execute`.
    public var submitted: Int
    /// Requests that ended with an HTTP response (any status).
    public var succeeded: Int
    /// Requests that ended with an `HTTPError`.
    public var failed: Int
    /// New connections curl opened (sum of `CURLINFO_NUM_CONNECTS`).
    public var connectionsOpened: Int
}

/// Requests libcurl put on the wire again by itself within one `execute`.
///
/// libcurl 7.88 re-sends a request on another connection, without telling
/// the caller, when nothing at all came back for it: the server refused the
/// stream unprocessed (above a GOAWAY's last-stream-id, or
/// RST_STREAM(REFUSED_STREAM)), or the reused connection died under it.
/// The client sees each attempt (`CURLOPT_PREREQFUNCTION`) and tells them
/// apart by the connection the previous attempt was on.
public struct HTTPResends: Sendable, Equatable {
    /// The previous attempt's connection was not reset: the server refused the
    /// stream (GOAWAY's last-stream-id below it, or REFUSED_STREAM).
    public var goaway: Int
    /// The previous attempt's connection was reset (the kernel saw a TCP RST).
    public var reset: Int

    public init(goaway: Int = 0, reset: Int = 0) {
        self.goaway = goaway
        self.reset = reset
    }

    public static let none = HTTPResends()

    /// All re-sends.
    public var total: Int { goaway + reset }
}
