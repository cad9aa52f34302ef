import Crypto
import Foundation
import PushCore

/// APNs: `POST /3/device/<token>`, following Apple's "Sending notification
/// requests to APNs", "Establishing a token-based connection to APNs" and
/// "Handling notification responses from APNs".
///
/// Payloads: Apple's only payload reasons are `PayloadEmpty` ("The message
/// payload was empty") and `PayloadTooLarge`. An empty body, or an empty JSON
/// object, gets `400 PayloadEmpty`. An MDM push (`apns-push-type: mdm`) is
/// `{"mdm": "<PushMagic>"}` with no `aps` (Apple's MDM protocol): it must carry
/// an `mdm` string. Any other JSON object is accepted whether or not it has an
/// `aps` dictionary, as APNs does: Apple's payload reference asks for `aps`
/// but documents no error for its absence (the device gets the custom keys
/// and shows nothing).
///
/// Choices where Apple documents no exact answer:
/// - A body that is not a JSON object, an `aps` that is not a dictionary, or
///   an MDM push without an `mdm` string gets `400 PayloadEmpty` (Apple has no
///   "bad payload" reason; a client must treat it as a permanent error for
///   that payload either way).
/// - A push type whose required topic suffix is missing (`voip` without
///   `.voip`, …), or an `alert`/`background` push to a topic carrying one of
///   those suffixes, gets `400 InvalidPushType`; a bundle ID outside the key's
///   team topics (or the certificate's bundle ID) gets `400 TopicDisallowed`.
/// - `background` needs priority 5: 10, 1 or no header (which means 10) get
///   `400 BadPriority` (Apple: "Using priority 10 is an error").
/// - A token registered for the other environment gets `400 BadDeviceToken`.
extension SimulatorRules {
    static let apnsPathPrefix = "/3/device/"
    static let apnsMaxPayload = 4096
    static let apnsMaxVoIPPayload = 5120
    static let apnsMaxCollapseIDBytes = 64

    /// Push type → the suffix its `apns-topic` must end with (nil: the bundle ID itself or not checked).
    static let apnsPushTypes: [String: String?] = [
        "alert": nil, "background": nil, "mdm": nil,
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider",
        "location": ".location-query", "liveactivity": ".push-type.liveactivity", "pushtotalk": ".voip-ptt",
        "widgets": ".push-type.widgets", "controls": ".push-type.controls",
    ]

    /// Every topic suffix a push type may require.
    static let apnsTopicSuffixes: [String] = apnsPushTypes.values.compactMap { $0 }

    static let apnsSingleHeaders = [
        "authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-id",
        "apns-collapse-id",
    ]

    func answerAPNs(to request: SimulatorRequest, now: Date) -> SimulatorAnswer {
        let requestID = request.header("apns-id")
        let validID = requestID.flatMap { Self.isUUID($0) ? $0 : nil }  // echoed exactly as sent
        var validCredential = false
        let response = checkAPNs(
            request, apnsID: validID ?? Self.newUUID(), idIsValid: requestID == nil || validID != nil, now: now,
            validCredential: &validCredential)
        state.record(response, apnsID: validID)
        return SimulatorAnswer(response: response, apnsID: validID, validCredential: validCredential)
    }

    private func checkAPNs(
        _ request: SimulatorRequest, apnsID: String, idIsValid: Bool, now: Date, validCredential: inout Bool
    ) -> SimulatorResponse {
        func fail(_ status: Int, _ reason: String) -> SimulatorResponse {
            Self.apnsError(status: status, reason: reason, apnsID: apnsID)
        }
        if fastMode {
            validCredential = true
            return Self.apnsSuccess(apnsID: apnsID)
        }
        guard request.method == "POST" else { return fail(405, "MethodNotAllowed") }
        let path = request.path
        guard path.hasPrefix(Self.apnsPathPrefix) else {
            return path == "/3/device" ? fail(400, "MissingDeviceToken") : fail(404, "BadPath")
        }
        let token = String(path.dropFirst(Self.apnsPathPrefix.count))
        guard !token.isEmpty else { return fail(400, "MissingDeviceToken") }
        let tokenLength = token.utf8.count
        guard tokenLength >= 64, tokenLength <= 200, tokenLength % 2 == 0, token.utf8.allSatisfy(\.isHexDigit) else {
            return fail(400, "BadDeviceToken")
        }
        if Self.apnsSingleHeaders.contains(where: { request.count(of: $0) > 1 }) {
            return fail(400, "DuplicateHeaders")
        }
        guard idIsValid else { return fail(400, "BadMessageId") }
        let credential: APNsCredential
        switch authenticate(request, now: now) {
        case .success(let accepted): credential = accepted
        case .failure(let failure): return fail(failure.status, failure.reason)
        }
        validCredential = true
        if let scenario = scenarioResponse(provider: "apns", apnsID: apnsID, now: now) { return scenario }

        guard let topic = request.header("apns-topic"), !topic.isEmpty else { return fail(400, "MissingTopic") }
        let pushType = request.header("apns-push-type") ?? "alert"
        guard let suffix = Self.apnsPushTypes[pushType] else { return fail(400, "InvalidPushType") }
        var bundleID = topic
        if let suffix {
            guard topic.hasSuffix(suffix), topic.count > suffix.count else { return fail(400, "InvalidPushType") }
            bundleID = String(topic.dropLast(suffix.count))
        } else if pushType != "mdm", Self.apnsTopicSuffixes.contains(where: { topic.hasSuffix($0) }) {
            return fail(400, "InvalidPushType")  // alert/background go to the bare bundle ID
        }
        if pushType != "mdm", !credential.allows(bundleID: bundleID) { return fail(400, "TopicDisallowed") }
        let priority = request.header("apns-priority")
        if let priority, priority != "10", priority != "5", priority != "1" { return fail(400, "BadPriority") }
        if pushType == "background", priority != "5" { return fail(400, "BadPriority") }
        if let expiration = request.header("apns-expiration"), !Self.isUnsignedInteger(expiration) {
            return fail(400, "BadExpirationDate")
        }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > Self.apnsMaxCollapseIDBytes {
            return fail(400, "BadCollapseId")
        }

        let body = request.body
        guard !body.isEmpty else { return fail(400, "PayloadEmpty") }
        let limit = pushType == "voip" ? Self.apnsMaxVoIPPayload : Self.apnsMaxPayload
        guard body.count <= limit else { return fail(413, "PayloadTooLarge") }
        guard Self.isDeliverableAPNsPayload(body, pushType: pushType) else { return fail(400, "PayloadEmpty") }

        if let apnsEnvironment, let tokenEnvironment = state.environment(token: token), tokenEnvironment != apnsEnvironment {
            return fail(400, "BadDeviceToken")
        }
        if let deadSince = state.deadSince(token: token) {
            let milliseconds = Int64((deadSince.timeIntervalSince1970 * 1000).rounded(.down))
            return Self.apnsError(status: 410, reason: "Unregistered", apnsID: apnsID, timestamp: milliseconds)
        }
        return Self.apnsSuccess(apnsID: apnsID)
    }

    /// A JSON object with something in it: an `mdm` string for an MDM push;
    /// for any other push type, an `aps` (if present) that is a dictionary.
    static func isDeliverableAPNsPayload(_ body: [UInt8], pushType: String) -> Bool {
        guard let payload = try? JSONValue.parse(body), let members = payload.objectMembers, !members.isEmpty else {
            return false
        }
        if pushType == "mdm" {
            guard case .string(let magic)? = payload["mdm"] else { return false }
            return !magic.isEmpty
        }
        if let aps = payload["aps"] { return aps.objectMembers != nil }
        return true
    }

    static func apnsSuccess(apnsID: String) -> SimulatorResponse {
        SimulatorResponse(status: 200, headers: [("apns-id", apnsID)], body: [], provider: "apns", reason: "OK")
    }

    /// Apple's error answer: `{"reason":…}` (plus `timestamp` for 410).
    static func apnsError(
        status: Int, reason: String, apnsID: String?, timestamp: Int64? = nil, provider: String = "apns"
    ) -> SimulatorResponse {
        var body = "{\"reason\":" + JSONWriter.quoted(reason)
        if let timestamp { body += ",\"timestamp\":\(timestamp)" }
        body += "}"
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        if let apnsID { headers.append(("apns-id", apnsID)) }
        return SimulatorResponse(
            status: status, headers: headers, body: Array(body.utf8), provider: provider, reason: reason)
    }

    static func apnsReason(forStatus status: Int) -> String {
        switch status {
        case 429: return "TooManyRequests"
        case 500: return "InternalServerError"
        default: return "ServiceUnavailable"
        }
    }
}
