import Foundation
import PushCore

/// FCM HTTP v1: `POST /v1/projects/<project>/messages:send`, following
/// `projects.messages.send` and its error codes. Errors use Google's envelope
/// `{"error":{"code":N,"message":"…","status":"…","details":[…]}}`.
extension SimulatorRules {
    static let fcmPathPrefix = "/v1/projects/"
    static let fcmPathSuffix = "/messages:send"
    static let fcmMaxMessageBytes = 4096
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let fcmTopLevelFields: Set<String> = ["message", "validate_only", "validateOnly"]
    static let fcmMessageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic",
        "condition",
    ]

    func respondFCM(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        var validateOnly = false
        let response = checkFCM(request, now: now, validateOnly: &validateOnly)
        state.record(response, apnsID: nil, fcmValidateOnly: validateOnly)
        return response
    }

    /// The project in `/v1/projects/<project>/messages:send`, or nil.
    static func fcmProject(inPath path: String) -> Substring? {
        guard path.hasPrefix(fcmPathPrefix), path.hasSuffix(fcmPathSuffix) else { return nil }
        let project = path.dropFirst(fcmPathPrefix.count).dropLast(fcmPathSuffix.count)
        guard !project.isEmpty, !project.contains("/") else { return nil }
        return project
    }

    private func checkFCM(_ request: SimulatorRequest, now: Date, validateOnly: inout Bool) -> SimulatorResponse {
        guard let project = Self.fcmProject(inPath: request.path) else {
            return Self.googleError(code: 404, message: "Requested entity was not found.", status: "NOT_FOUND")
        }
        if fastMode { return fcmSuccess(project: project) }
        guard request.method == "POST" else {
            return Self.googleError(code: 405, message: "Method not allowed.", status: "UNIMPLEMENTED")
        }
        guard let accessToken = Self.bearerToken(request.header("authorization")) else {
            return Self.googleError(
                code: 401,
                message: "Request is missing required authentication credential. Expected OAuth 2 access token, "
                    + "login cookie or other valid authentication credential.",
                status: "UNAUTHENTICATED")
        }
        guard let grant = state.grant(forAccessToken: String(accessToken)), grant.expires > now else {
            return Self.googleError(
                code: 401,
                message: "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                    + "login cookie or other valid authentication credential.",
                status: "UNAUTHENTICATED")
        }
        guard grant.projectID == project else {
            return Self.googleError(
                code: 403, message: "SenderId mismatch", status: "PERMISSION_DENIED",
                details: [Self.fcmErrorDetail("SENDER_ID_MISMATCH")], reason: "SENDER_ID_MISMATCH")
        }
        if let scenario = scenarioResponse(provider: "fcm", apnsID: nil, now: now) { return scenario }

        guard let document = try? JSONValue.parse(request.body), let members = document.objectMembers else {
            return Self.invalidArgument("Invalid JSON payload received.")
        }
        if let unknown = members.first(where: { !Self.fcmTopLevelFields.contains($0.key) })?.key {
            return Self.invalidArgument("Invalid JSON payload received. Unknown name \"\(unknown)\": Cannot find field.")
        }
        if let flag = document["validate_only"] ?? document["validateOnly"] {
            guard case .bool(let value) = flag else {
                return Self.invalidArgument("Invalid value at 'validate_only' (TYPE_BOOL)")
            }
            validateOnly = value
        }
        guard let message = document["message"], let fields = message.objectMembers else {
            return Self.invalidArgument("Request contains an invalid argument.", field: "message")
        }
        if let unknown = fields.first(where: { !Self.fcmMessageFields.contains($0.key) })?.key {
            return Self.invalidArgument(
                "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1, let target = message[targets[0]]?.stringValue, !target.isEmpty else {
            return Self.invalidArgument(
                "Exactly one of message.token, message.topic or message.condition must be set.", field: "message")
        }
        if let data = message["data"] {
            guard let entries = data.objectMembers else {
                return Self.invalidArgument("Invalid value at 'message.data'", field: "message.data")
            }
            if let bad = entries.first(where: { $0.value.stringValue == nil }) {
                return Self.invalidArgument(
                    "Invalid value at 'message.data[\(bad.key)].value' (TYPE_STRING)",
                    field: "message.data[\(bad.key)].value")
            }
        }
        // The limit applies to the message as sent without insignificant whitespace.
        if message.encoded().count > Self.fcmMaxMessageBytes {
            return Self.invalidArgument("Message is too big", field: "message")
        }
        if targets[0] == "token" {
            guard Self.isWellFormedFCMToken(target) else {
                return Self.invalidArgument(
                    "The registration token is not a valid FCM registration token", field: "message.token")
            }
            if state.deadSince(token: target) != nil {
                return Self.googleError(
                    code: 404, message: "Requested entity was not found.", status: "NOT_FOUND",
                    details: [Self.fcmErrorDetail("UNREGISTERED")], reason: "UNREGISTERED")
            }
        }
        return fcmSuccess(project: project, validateOnly: validateOnly)
    }

    /// Registration tokens are long runs of `[A-Za-z0-9_:-]`.
    static func isWellFormedFCMToken(_ token: String) -> Bool {
        token.utf8.count >= 20
            && token.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
    }

    private func fcmSuccess(project: Substring, validateOnly: Bool = false) -> SimulatorResponse {
        let id = validateOnly ? "fake_message_id" : "0:\(state.nextMessageNumber())%sim"
        let body = "{\"name\":" + JSONWriter.quoted("projects/\(project)/messages/\(id)") + "}"
        return SimulatorResponse(
            status: 200, headers: [("content-type", "application/json; charset=UTF-8")], body: Array(body.utf8),
            provider: "fcm", reason: "OK")
    }

    static func fcmErrorDetail(_ errorCode: String) -> String {
        "{\"@type\":\(JSONWriter.quoted(fcmErrorType)),\"errorCode\":\(JSONWriter.quoted(errorCode))}"
    }

    /// 400 INVALID_ARGUMENT with FCM's errorCode detail and, for a field, a BadRequest violation.
    static func invalidArgument(_ message: String, field: String? = nil) -> SimulatorResponse {
        var details = [fcmErrorDetail("INVALID_ARGUMENT")]
        if let field {
            details.append(
                "{\"@type\":\"type.googleapis.com/google.rpc.BadRequest\",\"fieldViolations\":[{\"field\":"
                    + JSONWriter.quoted(field) + ",\"description\":" + JSONWriter.quoted(message) + "}]}")
        }
        return googleError(code: 400, message: message, status: "INVALID_ARGUMENT", details: details)
    }

    /// What FCM answers when overloaded (429/500/503), for scenarios.
    static func fcmOverloadError(status: Int) -> SimulatorResponse {
        switch status {
        case 429:
            return googleError(
                code: 429, message: "Quota exceeded for quota metric 'Send requests'.", status: "RESOURCE_EXHAUSTED",
                details: [fcmErrorDetail("QUOTA_EXCEEDED")], reason: "QUOTA_EXCEEDED")
        case 500:
            return googleError(
                code: 500, message: "Internal error encountered.", status: "INTERNAL",
                details: [fcmErrorDetail("INTERNAL")], reason: "INTERNAL")
        default:
            return googleError(
                code: status, message: "The service is currently unavailable.", status: "UNAVAILABLE",
                details: [fcmErrorDetail("UNAVAILABLE")], reason: "UNAVAILABLE")
        }
    }

    /// Google's error envelope. `reason` (for stats) defaults to `status`.
    static func googleError(
        code: Int, message: String, status: String, details: [String] = [], reason: String? = nil
    ) -> SimulatorResponse {
        var body = "{\"error\":{\"code\":\(code),\"message\":\(JSONWriter.quoted(message)),\"status\":"
        body += JSONWriter.quoted(status)
        if !details.isEmpty { body += ",\"details\":[" + details.joined(separator: ",") + "]" }
        body += "}}"
        return SimulatorResponse(
            status: code, headers: [("content-type", "application/json; charset=UTF-8")], body: Array(body.utf8),
            provider: "fcm", reason: reason ?? status)
    }
}
