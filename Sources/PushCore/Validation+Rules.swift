import Foundation

extension PushNotification {
    /// Rules across fields that Apple and Google document (checked once every
    /// field is valid on its own).
    func consistencyIssues() -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        let type = APNsTranslator.pushType(for: self)
        let visible = !(alert?.isEmpty ?? true) || badge != nil || sound != nil
        if type == .background {
            if visible {
                issues.append(ValidationIssue(path: "apns.push_type", reason: "a background push must not carry an alert, a badge or a sound"))
            }
            if apns.header("apns-priority") == "10" {
                issues.append(ValidationIssue(path: "apns.headers.apns-priority", reason: "a background push must use priority 5 (Apple: 10 is an error)"))
            }
        }
        if type == .mdm, data.first(where: { $0.key == "mdm" })?.value.stringValue == nil {
            issues.append(ValidationIssue(path: "data.mdm", reason: "an mdm push carries the device's PushMagic string in data.mdm"))
        }
        if type == .liveactivity {
            issues += liveActivityIssues()
        }
        return issues
    }

    /// ActivityKit: every Live Activity push has `event` and `timestamp`;
    /// start and update carry `content-state`; start also names the attributes.
    private func liveActivityIssues() -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        let aps = JSONValue.object(apns.aps)
        let event = aps["event"]?.stringValue
        if event == nil || !["start", "update", "end"].contains(event ?? "") {
            issues.append(ValidationIssue(path: "apns.aps.event", reason: "a liveactivity push needs event start, update or end"))
        }
        if aps["timestamp"]?.numberValue == nil {
            issues.append(ValidationIssue(path: "apns.aps.timestamp", reason: "a liveactivity push needs a UNIX timestamp"))
        }
        if event == "start" || event == "update", aps["content-state"]?.objectMembers == nil {
            issues.append(ValidationIssue(path: "apns.aps.content-state", reason: "a liveactivity \(event ?? "") push needs content-state"))
        }
        if event == "start" {
            if aps["attributes-type"]?.stringValue == nil {
                issues.append(ValidationIssue(path: "apns.aps.attributes-type", reason: "a liveactivity start push needs attributes-type"))
            }
            if aps["attributes"]?.objectMembers == nil {
                issues.append(ValidationIssue(path: "apns.aps.attributes", reason: "a liveactivity start push needs attributes"))
            }
        }
        return issues
    }

    /// The providers' size limits, measured on the exact bytes translation
    /// produces: APNs 4096 (VoIP 5120), FCM 4096 per token (longest token
    /// counted) and 2048 for topic/condition messages, Push Kit 4096 without
    /// the token, Web Push 3993 bytes of plaintext. The APNs payload is the
    /// one decode kept (`apnsPayload`), rendered here only when there is none.
    func payloadLimitIssues() -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        if recipients.contains(where: { $0.platform == .ios }) {
            let size = APNsTranslator.keptOrRenderedPayload(for: self).count
            let limit = APNsTranslator.pushType(for: self).maxPayloadBytes
            if size > limit {
                issues.append(ValidationIssue(path: "$", reason: "APNs payload is \(size) bytes after translation, over Apple's \(limit)-byte limit",
                                              code: .payloadTooLarge))
            }
        }
        // The same bytes FCMTranslator.request writes (straight out, no tree), measured and
        // dropped; the first of the longest Android tokens, then each topic and condition.
        // Not kept as the APNs payload is: a message names its token and counts `android.ttl`
        // from the `now` translation is given, so it could serve one recipient's request at most.
        func check(_ target: FCMTranslator.Target) {
            let size = FCMTranslator.message(for: self, target: target, now: nil).count
            if size > target.maxMessageBytes {
                issues.append(ValidationIssue(path: "$", reason: "FCM message to \(target.kind) is \(size) bytes after translation, over the \(target.maxMessageBytes)-byte limit",
                                              code: .payloadTooLarge))
            }
        }
        if recipients.contains(where: { $0.platform == .web }) {
            let size = WebPushTranslator.payload(for: self).encoded().count
            if size > WebPushTranslator.maxPlaintextBytes {
                issues.append(ValidationIssue(path: "$", reason: "Web Push payload is \(size) bytes after translation, over the \(WebPushTranslator.maxPlaintextBytes) bytes one 4096-byte encrypted record holds",
                                              code: .payloadTooLarge))
            }
        }
        // Push Kit's 4096 bytes exclude the token: any token measures the same.
        if recipients.contains(where: { $0.platform == .huawei }),
           case .failure(.tooLarge(let size)) = Result(catching: { () throws(HMSTranslator.Failure) in
               try HMSTranslator.body(for: HMSTranslator.message(for: self, token: "t", now: nil))
           }) {
            issues.append(ValidationIssue(path: "$", reason: "Push Kit message is \(size) bytes after translation, over the \(HMSTranslator.maxMessageBytes)-byte limit",
                                          code: .payloadTooLarge))
        }
        var longest: String?
        for recipient in recipients where recipient.platform == .android {
            if let current = longest, recipient.token.utf8.count <= current.utf8.count { continue }
            longest = recipient.token
        }
        if let longest { check(.token(longest)) }
        for target in fcmTargets {
            switch target {
            case .topic(let t): check(.topic(t))
            case .condition(let c): check(.condition(c))
            }
        }
        return issues
    }
}
