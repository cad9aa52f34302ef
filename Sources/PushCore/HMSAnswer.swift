import Foundation

/// A Huawei Push Kit result code (the `code` of a `messages:send` answer),
/// kept verbatim. Known codes have names; a code Huawei adds tomorrow is
/// still a valid `HMSResultCode`.
///
/// Codes and meanings: Huawei's "Sending Downlink Messages" reference, result
/// codes section (developer.huawei.com/consumer/en/doc/HMSCore-References/
/// https-send-api-0000001050986197), and Huawei's own server sample
/// HMS-Core/hms-push-serverdemo-java, src/main/java/com/huawei/push/util/ResponceCodeProcesser.java;
/// the same list in threema-ch/push-relay, src/push/hms.rs (`HmsCode`).
public struct HMSResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Sent.
    public static let success = HMSResultCode("80000000")
    /// Some tokens took the message; `msg` is a JSON string listing the
    /// `illegal_tokens` it failed for (with `success` / `failure` counts).
    public static let partialSuccess = HMSResultCode("80100000")
    /// A request parameter failed the checks.
    public static let invalidParameters = HMSResultCode("80100001")
    /// The token count must be 1 for this kind of message.
    public static let tokenCountMustBeOne = HMSResultCode("80100002")
    /// The message structure is wrong.
    public static let invalidMessageStructure = HMSResultCode("80100003")
    /// The TTL ends before now.
    public static let ttlInThePast = HMSResultCode("80100004")
    /// `collapse_key` is invalid.
    public static let invalidCollapseKey = HMSResultCode("80100013")
    /// The message contains sensitive information.
    public static let sensitiveContent = HMSResultCode("80100016")
    /// More than 100 topic messages at the same time.
    public static let tooManyTopicMessages = HMSResultCode("80100017")
    /// The message body is invalid.
    public static let invalidMessageBody = HMSResultCode("80100018")
    /// The access token was refused (missing, wrong, or issued for another app id).
    public static let oauthAuthenticationError = HMSResultCode("80200001")
    /// The access token expired.
    public static let oauthTokenExpired = HMSResultCode("80200003")
    /// The app may not send messages (Push Kit not enabled, token of another app, …).
    public static let noPermission = HMSResultCode("80300002")
    /// Every token in the request is invalid.
    public static let allTokensInvalid = HMSResultCode("80300007")
    /// The message body (without the tokens) is larger than 4096 bytes.
    public static let messageTooLarge = HMSResultCode("80300008")
    /// More tokens than allowed (1,000).
    public static let tooManyTokens = HMSResultCode("80300010")
    /// No permission for high-priority (urgency `HIGH`) notifications.
    public static let noHighPriorityPermission = HMSResultCode("80300011")
    /// The receipt URL is invalid.
    public static let invalidReceiptURL = HMSResultCode("80300013")
    /// Push Kit failed to ask the OAuth service (check the client id and secret).
    public static let oauthServiceFailure = HMSResultCode("80600003")
    /// Push Kit's internal error.
    public static let internalError = HMSResultCode("81000001")
}

/// The parts of a Push Kit answer body the classifier reads:
/// `{"code":"80000000","msg":"Success","requestId":"…"}`. Parsing is total:
/// a body that is not JSON, or a member of the wrong type, is simply absent.
public struct HMSAnswer: Sendable, Equatable {
    /// Longest code or request id kept (a hostile body cannot make a huge reason).
    static let maxFieldLength = 128

    public var code: HMSResultCode?
    public var message: String?
    public var requestID: String?

    public init(code: HMSResultCode? = nil, message: String? = nil, requestID: String? = nil) {
        self.code = code
        self.message = message
        self.requestID = requestID
    }

    /// Reads `body`; `code` may be a string or an integral number.
    public init(body: [UInt8]) {
        guard !body.isEmpty, let json = try? JSONValue.parse(body) else { return }
        code = Self.text(json["code"]).map(HMSResultCode.init(rawValue:))
        message = json["msg"]?.stringValue
        requestID = Self.text(json["requestId"])
    }

    /// A string (trimmed) or an integral number as text, at most `maxFieldLength`
    /// characters; nil for anything else or a blank. (Huawei sends codes as
    /// strings, its OAuth errors as numbers.)
    public static func text(_ value: JSONValue?) -> String? {
        let text: String
        switch value {
        case .string(let s)?: text = s.trimmingCharacters(in: .whitespaces)
        case .int(let i)?: text = String(i)
        case .double(let d)? where d.isFinite && d == d.rounded() && abs(d) < 1e15:
            guard let exact = Int64(exactly: d) else { return nil }
            text = String(exact)
        default: return nil
        }
        guard !text.isEmpty else { return nil }
        return text.count > maxFieldLength ? String(text.prefix(maxFieldLength)) : text
    }
}

/// The `msg` of a partial success (`80100000`), itself a JSON string such as
/// `{"success":3,"failure":1,"illegal_tokens":["…"]}` (Huawei's result codes
/// section shows this shape). Newer answers list tokens per reason as
/// `illegalTokens: {"<reason>": ["…"]}`; both are read.
public struct HMSPartialResult: Sendable, Equatable {
    public var success: Int?
    public var failure: Int?
    public var illegalTokens: [String]

    /// nil unless `msg` is a JSON object.
    public init?(msg: String) {
        guard let json = try? JSONValue.parse(Array(msg.utf8)), json.objectMembers != nil else { return nil }
        success = Self.count(json["success"])
        failure = Self.count(json["failure"])
        var tokens: [String] = []
        for key in ["illegal_tokens", "illegalTokens"] {
            switch json[key] {
            case .array(let items)?: tokens += items.compactMap(\.stringValue)
            case .object(let groups)?:
                for group in groups { if case .array(let items) = group.value { tokens += items.compactMap(\.stringValue) } }
            default: break
            }
        }
        illegalTokens = tokens
    }

    /// A non-negative count given as a number or digits, nil otherwise.
    static func count(_ value: JSONValue?) -> Int? {
        guard let text = HMSAnswer.text(value), let n = Int(text), n >= 0 else { return nil }
        return n
    }
}
