import Foundation
import PushCore

/// Huawei Push Kit: `POST /v1/<appId>/messages:send`, answering
/// `{"code":"…","msg":"…","requestId":"…"}` with the result codes of Huawei's
/// "Sending Downlink Messages" reference (see `HMSResultCode` in PushCore).
///
/// Huawei documents the codes and the HTTP statuses in separate tables; the
/// pairing here is our reading of them and of open-source senders
/// (threema-ch/push-relay src/push/hms.rs reads token results from HTTP 200
/// answers): token results (80000000, 80100000, 80300007) come with 200,
/// request errors with 400, access token errors with 401, 81000001 with 500,
/// flow control is a bare 503.
///
/// Scenario tokens: `dead-…` / `invalid-…` (or a configured dead token) are
/// illegal tokens; `flow-…` gets 503 flow control (`retry-after: 1`);
/// `internal-…` gets 81000001.
extension SimulatorRules {
    static let hmsMaxMessageBytes = 4096
    static let hmsMaxTokens = 1000

    /// The app id in `/v1/<appId>/messages:send` (not FCM's `/v1/projects/…`), or nil.
    static func hmsAppID(inPath path: String) -> Substring? {
        let prefix = "/v1/", suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.utf8.count > prefix.utf8.count + suffix.utf8.count else {
            return nil
        }
        let appID = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard !appID.isEmpty, appID != "projects", !appID.contains("/") else { return nil }
        return appID
    }

    func respondHMS(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        guard let appID = Self.hmsAppID(inPath: request.path) else {
            return Self.hmsAnswer(status: 404, code: "80100001", msg: "UnSupported svc")
        }
        if fastMode { return hmsSuccess() }
        guard request.method == "POST" else { return Self.hmsAnswer(status: 405, code: "80100001", msg: "Method not allowed") }
        guard let token = Self.bearerToken(request.header("authorization")),
              let grant = state.grant(forAccessToken: String(token)),
              grant.projectID == Self.hmsGrantPrefix + String(appID)
        else { return Self.hmsAnswer(status: 401, code: "80200001", msg: "Oauth authentication error") }
        guard grant.expires > now else { return Self.hmsAnswer(status: 401, code: "80200003", msg: "Oauth Token expired") }
        return checkHMSMessage(request.body)
    }

    private func checkHMSMessage(_ body: [UInt8]) -> SimulatorResponse {
        guard let document = try? JSONValue.parse(body), document.objectMembers != nil,
              let message = document["message"], let fields = message.objectMembers
        else { return Self.hmsAnswer(status: 400, code: "80100003", msg: "Incorrect message structure") }
        if let flag = document["validate_only"] {
            guard case .bool = flag else {
                return Self.hmsAnswer(status: 400, code: "80100001", msg: "validate_only must be a boolean")
            }
        }
        guard case .array(let items)? = message["token"] else {
            return Self.hmsAnswer(status: 400, code: "80100003", msg: "message.token must be an array")
        }
        let tokens = items.compactMap(\.stringValue)
        guard tokens.count == items.count, !tokens.isEmpty, tokens.count <= Self.hmsMaxTokens else {
            return Self.hmsAnswer(status: 400, code: "80300010", msg: "Tokens exceed the default value")
        }
        if let problem = Self.hmsFieldProblem(message) { return Self.hmsAnswer(status: 400, code: problem.code, msg: problem.msg) }
        // The limit counts the message without its tokens.
        let withoutTokens = JSONValue.object(fields.filter { $0.key != "token" })
        if withoutTokens.encoded().count > Self.hmsMaxMessageBytes {
            return Self.hmsAnswer(
                status: 400, code: "80300008", msg: "The message body size exceeds the default value set by the system (4K)")
        }
        if tokens.contains(where: { $0.hasPrefix("flow-") }) {
            var response = Self.hmsAnswer(status: 503, code: nil, msg: "Flow control")
            response.headers.append(("retry-after", "1"))
            return response
        }
        if tokens.contains(where: { $0.hasPrefix("internal-") }) {
            return Self.hmsAnswer(status: 500, code: "81000001", msg: "System inner error")
        }
        let illegal = tokens.filter { $0.hasPrefix("dead-") || $0.hasPrefix("invalid-") || state.deadSince(token: $0) != nil }
        guard !illegal.isEmpty else { return hmsSuccess() }
        let result = JSONValue.object([
            ("success", .int(Int64(tokens.count - illegal.count))), ("failure", .int(Int64(illegal.count))),
            ("illegal_tokens", .array(illegal.map(JSONValue.string))),
        ]).encoded()
        return Self.hmsAnswer(
            status: 200, code: illegal.count == tokens.count ? "80300007" : "80100000",
            msg: String(decoding: result, as: UTF8.self))
    }

    /// The first field rule `message` breaks: `data` a string, a notification
    /// message (`notification` or `android.notification`) with a title and a
    /// body, `android.collapse_key` in -1…100, `android.urgency` HIGH/NORMAL,
    /// `android.ttl` like `86400s`, a click action of type 1…4 on an Android
    /// notification.
    static func hmsFieldProblem(_ message: JSONValue) -> (code: String, msg: String)? {
        if let data = message["data"], data.stringValue == nil { return ("80100003", "message.data must be a string") }
        if let problem = hmsNotificationProblem(message) { return problem }
        guard let android = message["android"] else { return nil }
        guard android.objectMembers != nil else { return ("80100003", "message.android must be an object") }
        if let key = android["collapse_key"] {
            guard let n = key.integerValue, (-1...100).contains(n) else { return ("80100013", "Collapse_key is illegal") }
        }
        if let urgency = android["urgency"], !["HIGH", "NORMAL"].contains(urgency.stringValue ?? "") {
            return ("80100001", "urgency must be HIGH or NORMAL")
        }
        if let ttl = android["ttl"], !isHMSTTL(ttl.stringValue ?? "") { return ("80100001", "The TTL's format is wrong") }
        if let notification = android["notification"] {
            guard let type = notification["click_action"]?["type"]?.integerValue, (1...4).contains(type) else {
                return ("80100003", "click_action.type must be 1-4")
            }
        }
        return nil
    }

    /// Huawei's reference makes a notification message's title and body
    /// mandatory: each set in `android.notification` or, failing that, in
    /// `message.notification` ("you must set at least one of title and
    /// message.notification.title", likewise body). An image shows only
    /// beside them; a message with neither block is a data message.
    static func hmsNotificationProblem(_ message: JSONValue) -> (code: String, msg: String)? {
        let shared = message["notification"], android = message["android"]?["notification"]
        guard shared != nil || android != nil else { return nil }
        for field in ["title", "body"] {
            let text = android?[field]?.stringValue ?? shared?[field]?.stringValue ?? ""
            if text.isEmpty { return ("80100003", "a notification message needs a \(field) (android.notification.\(field) or notification.\(field))") }
        }
        return nil
    }

    /// `<digits>[.<1-9 digits>][s]`, as Huawei's server sample checks a TTL.
    static func isHMSTTL(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.hasSuffix("s") || rest.hasSuffix("S") { rest = rest.dropLast() }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        switch parts.count {
        case 1: return digits(parts[0]) && parts[0].count <= 18
        case 2: return digits(parts[0]) && parts[0].count <= 18 && digits(parts[1]) && parts[1].count <= 9
        default: return false
        }
    }

    private func hmsSuccess() -> SimulatorResponse {
        Self.hmsAnswer(status: 200, code: "80000000", msg: "Success", requestID: "sim\(state.nextMessageNumber())")
    }

    /// Push Kit's answer body; `reason` in the stats is the code (or `HTTP<status>` without one).
    static func hmsAnswer(status: Int, code: String?, msg: String, requestID: String? = nil) -> SimulatorResponse {
        let id = requestID ?? "sim-\(UInt64.random(in: 1...UInt64.max))"
        var body = "{"
        if let code { body += "\"code\":\(JSONWriter.quoted(code))," }
        body += "\"msg\":\(JSONWriter.quoted(msg)),\"requestId\":\(JSONWriter.quoted(id))}"
        return SimulatorResponse(
            status: status, headers: [("content-type", "application/json;charset=UTF-8")], body: Array(body.utf8),
            provider: "hms", reason: code ?? "HTTP\(status)")
    }
}
