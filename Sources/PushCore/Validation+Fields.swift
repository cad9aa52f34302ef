import Foundation

/// The recipients of one notification, by kind.
struct RecipientSet {
    var tokens: [Recipient] = []
    var userIDs: [String] = []
    var fcm: [FCMTarget] = []
    var isEmpty: Bool { tokens.isEmpty && userIDs.isEmpty && fcm.isEmpty }
}

extension FieldReader {
    static let tokenRecipientFields = ["token", "platform"]
    static let userRecipientFields = ["user_id"]
    static let topicRecipientFields = ["topic"]
    static let conditionRecipientFields = ["condition"]
    static let subscriptionRecipientFields = ["platform", "subscription"]
    static let subscriptionFields = ["endpoint", "expirationTime", "keys"]
    static let subscriptionKeyFields = ["p256dh", "auth"]
    static let alertFields = [
        "title", "body", "subtitle", "title_loc_key", "title_loc_args", "subtitle_loc_key", "subtitle_loc_args",
        "body_loc_key", "body_loc_args", "launch_image",
    ]
    /// Each `*_loc_args` needs its `*_loc_key`.
    static let alertLocArgsKeys = [
        ("title_loc_args", "title_loc_key"), ("subtitle_loc_args", "subtitle_loc_key"), ("body_loc_args", "body_loc_key"),
    ]
    static let soundFields = ["name", "critical", "volume"]
    /// The ways to name a recipient, in the order issues list them.
    static let recipientForms = ["token", "user_id", "topic", "condition", "subscription"]

    /// `recipients`: device tokens, user ids, FCM topics or conditions.
    /// Duplicates are dropped so nobody gets the same notification twice.
    mutating func recipients() -> RecipientSet? {
        guard let v = value("recipients", required: true) else { return nil }
        guard case .array(let items) = v else { fail("recipients", "must be an array", .wrongType); return nil }
        if items.isEmpty { fail("recipients", "must not be empty"); return nil }
        if items.count > IntakeLimits.maxRecipients {
            fail("recipients", "more than \(IntakeLimits.maxRecipients) recipients"); return nil
        }
        var result = RecipientSet()
        var seenTokens = Set<Recipient>(), seenUsers = Set<String>(), seenFCM = Set<FCMTarget>()
        // A single recipient (the common case) cannot repeat: no hashing of its token.
        let single = items.count == 1
        for (i, item) in items.enumerated() {
            guard case .object = item else { fail("recipients[\(i)]", "must be an object", .wrongType); continue }
            var sub = nested("recipients", index: i, item)
            var form: String?, formCount = 0
            for name in Self.recipientForms where sub.has(name) {
                formCount += 1
                if form == nil { form = name }
            }
            if formCount == 0 && sub.has("platform") {
                fail("recipients[\(i)].token", "is required", .missingField)
                continue
            }
            guard formCount == 1, let form else {
                fail("recipients[\(i)]", formCount == 0
                     ? "needs one of token (with platform), user_id, topic, condition or subscription (with platform web)"
                     : "give only one of \(Self.recipientForms.filter { sub.has($0) }.joined(separator: ", "))")
                continue
            }
            switch form {
            case "token":
                let token = sub.nonEmptyString("token", maxBytes: IntakeLimits.maxTokenBytes)
                let platform = sub.oneOf("platform", Platform.self)
                if !sub.has("platform") { sub.fail("platform", "is required", .missingField) }
                sub.rejectUnknown(allowed: Self.tokenRecipientFields)
                if platform == .web {
                    sub.fail("platform", "a web recipient gives its browser subscription (subscription: {endpoint, keys}), not a token")
                } else if let token, let platform, let problem = Recipient.tokenProblem(token, platform: platform) {
                    sub.fail("token", problem)
                } else if let token, let platform {
                    let r = Recipient(token: token, platform: platform)
                    if single || seenTokens.insert(r).inserted { result.tokens.append(r) }
                }
            case "user_id":
                sub.rejectUnknown(allowed: Self.userRecipientFields)
                if let user = sub.nonEmptyString("user_id", maxBytes: 255), single || seenUsers.insert(user).inserted {
                    result.userIDs.append(user)
                }
            case "topic":
                sub.rejectUnknown(allowed: Self.topicRecipientFields)
                if let topic = sub.nonEmptyString("topic", maxBytes: IntakeLimits.maxFCMTargetBytes) {
                    if topic.hasPrefix("/topics/") {
                        sub.fail("topic", "give the bare topic name, without the /topics/ prefix")
                    } else if !FCMTranslator.isValidTopicName(topic) {
                        sub.fail("topic", "must match [a-zA-Z0-9-_.~%]+")
                    } else if single || seenFCM.insert(.topic(topic)).inserted {
                        result.fcm.append(.topic(topic))
                    }
                }
            case "subscription":
                sub.rejectUnknown(allowed: Self.subscriptionRecipientFields)
                // One endpoint is one subscription (and one ledger row), whatever keys or padding each copy gives.
                if let r = sub.webSubscription(), single || seenTokens.insert(Recipient(token: r.token, platform: .web)).inserted {
                    result.tokens.append(r)
                }
            default:
                sub.rejectUnknown(allowed: Self.conditionRecipientFields)
                if let condition = sub.nonEmptyString("condition", maxBytes: IntakeLimits.maxFCMTargetBytes) {
                    let topics = FCMTranslator.conditionTopicCount(condition)
                    if topics == 0 {
                        sub.fail("condition", "must name at least one topic ('name' in topics)")
                    } else if topics > IntakeLimits.maxConditionTopics {
                        sub.fail("condition", "FCM allows at most \(IntakeLimits.maxConditionTopics) topics in a condition (got \(topics))")
                    } else if single || seenFCM.insert(.condition(condition)).inserted {
                        result.fcm.append(.condition(condition))
                    }
                }
            }
            issues += sub.issues
        }
        return result
    }

    /// A browser's `PushSubscription` (`platform: "web"`, `subscription:
    /// {endpoint, keys: {p256dh, auth}, expirationTime}`): an endpoint the
    /// sender can use (`WebPushEndpointRules`, the rule sealing applies, which
    /// the schema's pattern states), and keys of the right sizes (`WebPushKeys`). `expirationTime` (milliseconds, or null) is
    /// allowed and not used: the push service answers 404/410 once it passes.
    mutating func webSubscription() -> Recipient? {
        var ok = true
        switch string("platform") {
        case "web"?: break
        case nil: if !has("platform") { fail("platform", "is required", .missingField) }; ok = false
        case let other?: fail("platform", "must be web for a subscription (got \"\(other.prefix(40))\")"); ok = false
        }
        let recipient = subscription()
        return ok ? recipient : nil
    }

    /// The `subscription` member: `{endpoint, keys: {p256dh, auth}, expirationTime}`.
    mutating func subscription() -> Recipient? {
        guard let json = object("subscription") else {
            if !has("subscription") { fail("subscription", "is required", .missingField) }
            return nil
        }
        var sub = nested("subscription", json)
        sub.rejectUnknown(allowed: Self.subscriptionFields)
        let endpoint = sub.nonEmptyString("endpoint", required: true, maxBytes: WebPushEndpointRules.maxBytes)
        if let endpoint, case .failure(let problem) = WebPushEndpointRules.origin(of: endpoint) {
            sub.fail("endpoint", problem.reason)
        }
        if let v = sub.value("expirationTime", required: false), v.numberValue == nil {
            sub.fail("expirationTime", "must be a number (milliseconds since 1970) or null", .wrongType)
        }
        var keys: WebPushKeys?
        if let keysJSON = sub.value("keys", required: true) {
            if case .object = keysJSON {
                var k = sub.nested("keys", keysJSON)
                k.rejectUnknown(allowed: Self.subscriptionKeyFields)
                let p256dh = k.string("p256dh", required: true)
                let auth = k.string("auth", required: true)
                if let p256dh, let problem = WebPushKeys.p256dhProblem(p256dh) { k.fail("p256dh", problem) }
                if let auth, let problem = WebPushKeys.authProblem(auth) { k.fail("auth", problem) }
                if let p256dh, let auth, k.issues.isEmpty { keys = WebPushKeys(p256dh: p256dh, auth: auth) }
                sub.issues += k.issues
            } else {
                sub.fail("keys", "must be an object", .wrongType)
            }
        }
        issues += sub.issues
        guard sub.issues.isEmpty, let endpoint, let keys else { return nil }
        return Recipient(endpoint: endpoint, keys: keys)
    }

    /// `alert`: texts and localisation keys/args.
    mutating func alert() -> PushNotification.Alert? {
        guard let json = object("alert") else { return nil }
        var sub = nested("alert", json)
        let alert = PushNotification.Alert(
            title: sub.string("title"), body: sub.string("body"), subtitle: sub.string("subtitle"),
            titleLocKey: sub.nonEmptyString("title_loc_key"), titleLocArgs: sub.stringArray("title_loc_args"),
            subtitleLocKey: sub.nonEmptyString("subtitle_loc_key"), subtitleLocArgs: sub.stringArray("subtitle_loc_args"),
            bodyLocKey: sub.nonEmptyString("body_loc_key"), bodyLocArgs: sub.stringArray("body_loc_args"),
            launchImage: sub.nonEmptyString("launch_image"))
        for (args, key) in Self.alertLocArgsKeys where sub.has(args) && !sub.has(key) {
            sub.fail(args, "needs \(key)")
        }
        sub.rejectUnknown(allowed: Self.alertFields)
        issues += sub.issues
        return alert
    }

    /// `sound`: a name, or `{"name", "critical", "volume"}` (Apple's critical-alert sound).
    mutating func sound() -> PushNotification.Sound? {
        guard let v = value("sound", required: false) else { return nil }
        switch v {
        case .string(let name):
            if name.isEmpty { fail("sound", "must not be empty"); return nil }
            return PushNotification.Sound(name: name)
        case .object:
            var sub = nested("sound", v)
            let name = sub.nonEmptyString("name", required: true)
            let critical = sub.bool("critical") ?? false
            let volume = sub.double("volume", in: 0...1)
            sub.rejectUnknown(allowed: Self.soundFields)
            issues += sub.issues
            guard let name else { return nil }
            return PushNotification.Sound(name: name, critical: critical, volume: volume)
        default:
            fail("sound", "must be a sound name or an object {name, critical, volume}", .wrongType)
            return nil
        }
    }

    /// `data`: custom key-value data; keys Apple or Google reserve are refused.
    mutating func customData() -> [(key: String, value: JSONValue)] {
        guard let json = object("data"), case .object(let members) = json else { return [] }
        for member in members {
            if member.key == "aps" {
                fail("data.aps", "\"aps\" is reserved by APNs")
            } else if FCMTranslator.isReservedDataKey(member.key) {
                fail("data.\(member.key)", "reserved by FCM (\(FCMTranslator.reservedDataKeysText))")
            }
        }
        return members
    }
}

extension Recipient {
    /// Why `token` cannot address a device of `platform` at all, or nil: the
    /// rule intake and the device registry apply before anything is stored
    /// or sent, the same one translation checks (Push Kit tokens:
    /// `HMSTranslator.isWellFormedToken`). APNs and FCM tokens are judged
    /// at translation only, per delivery (`BadDeviceToken`, `INVALID_ARGUMENT`).
    public static func tokenProblem(_ token: String, platform: Platform) -> String? {
        switch platform {
        case .huawei: HMSTranslator.isWellFormedToken(token) ? nil : HMSTranslator.tokenRule
        case .ios, .android, .web: nil
        }
    }

    /// A browser's `PushSubscription` JSON (`{endpoint, keys: {p256dh, auth},
    /// expirationTime}`) read by the rules intake applies to a web recipient,
    /// for messages that carry one elsewhere (the device registry). Issue
    /// paths start with `subscription.`.
    public static func webSubscription(_ json: JSONValue) -> Result<Recipient, IntakeError> {
        var reader = FieldReader(json: .object([("subscription", json)]))
        let recipient = reader.subscription()
        if let recipient, reader.issues.isEmpty { return .success(recipient) }
        let issues = reader.issues.isEmpty
            ? [ValidationIssue(path: "subscription", reason: "is not a push subscription")] : reader.issues
        return .failure(IntakeError(kind: .invalid, issues: issues))
    }
}
