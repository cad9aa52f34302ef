import Foundation

extension PushNotification {
    /// The intake JSON for this notification (`schemas/notification.schema.json`),
    /// as producers publish it; `decode` of it gives this notification back.
    public func intakeJSON() -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("schema_version", .int(Int64(schemaVersion))),
            ("id", .string(id.uuidString.lowercased())),
            ("app", .string(app)),
            ("created_at", .string(Timestamps.format(createdAt))),
        ]
        if let expiresAt { members.append(("expires_at", .string(Timestamps.format(expiresAt)))) }
        if doNotStore && expiresAt == nil { members.append(("ttl_seconds", .int(0))) }
        members.append(("priority", .string(priority.rawValue)))
        if let campaign { members.append(("campaign", .string(campaign))) }
        if let collapseKey { members.append(("collapse_key", .string(collapseKey))) }
        var targets: [JSONValue] = recipients.map { $0.intakeJSON() }
        targets += userRecipients.map { .object([("user_id", .string($0))]) }
        targets += fcmTargets.map { target in
            switch target {
            case .topic(let t): .object([("topic", .string(t))])
            case .condition(let c): .object([("condition", .string(c))])
            }
        }
        members.append(("recipients", .array(targets)))
        if let alert, !alert.isEmpty || alert.launchImage != nil { members.append(("alert", alert.intakeJSON())) }
        if let badge { members.append(("badge", .int(Int64(badge)))) }
        if let sound { members.append(("sound", sound.intakeJSON())) }
        if let category { members.append(("category", .string(category))) }
        if let threadID { members.append(("thread_id", .string(threadID))) }
        if contentAvailable { members.append(("content_available", .bool(true))) }
        if mutableContent { members.append(("mutable_content", .bool(true))) }
        if let interruptionLevel { members.append(("interruption_level", .string(interruptionLevel.rawValue))) }
        if let relevanceScore { members.append(("relevance_score", .double(relevanceScore))) }
        if let targetContentID { members.append(("target_content_id", .string(targetContentID))) }
        if let imageURL { members.append(("image_url", .string(imageURL))) }
        if !data.isEmpty { members.append(("data", .object(data))) }
        if !apns.isEmpty {
            var o: [(key: String, value: JSONValue)] = []
            if let pushType = apns.pushType { o.append(("push_type", .string(pushType.rawValue))) }
            if let topic = apns.topic { o.append(("topic", .string(topic))) }
            if !apns.aps.isEmpty { o.append(("aps", .object(apns.aps))) }
            if !apns.headers.isEmpty { o.append(("headers", .object(apns.headers.map { ($0.name, .string($0.value)) }))) }
            members.append(("apns", .object(o)))
        }
        if !fcm.isEmpty {
            var o: [(key: String, value: JSONValue)] = []
            if !fcm.android.isEmpty { o.append(("android", .object(fcm.android))) }
            if !fcm.webpush.isEmpty { o.append(("webpush", .object(fcm.webpush))) }
            if !fcm.apns.isEmpty { o.append(("apns", .object(fcm.apns))) }
            if !fcm.fcmOptions.isEmpty { o.append(("fcm_options", .object(fcm.fcmOptions))) }
            members.append(("fcm", .object(o)))
        }
        return .object(members)
    }

    /// The Kafka key that keeps one recipient's notifications ordered: the
    /// first device token, else the first user id, else the first FCM target,
    /// else the notification id.
    public var partitionKey: String {
        if let token = recipients.first?.token { return token }
        if let user = userRecipients.first { return user }
        switch fcmTargets.first {
        case .topic(let t)?: return "topic:" + t
        case .condition(let c)?: return "condition:" + c
        case nil: return id.uuidString.lowercased()
        }
    }
}

extension PushNotification.Alert {
    func intakeJSON() -> JSONValue {
        var fields: [(key: String, value: JSONValue)] = []
        func add(_ key: String, _ value: String?) { if let value { fields.append((key, .string(value))) } }
        func add(_ key: String, _ values: [String]?) { if let values { fields.append((key, .array(values.map(JSONValue.string)))) } }
        add("title", title)
        add("subtitle", subtitle)
        add("body", body)
        add("title_loc_key", titleLocKey)
        add("title_loc_args", titleLocArgs)
        add("subtitle_loc_key", subtitleLocKey)
        add("subtitle_loc_args", subtitleLocArgs)
        add("body_loc_key", bodyLocKey)
        add("body_loc_args", bodyLocArgs)
        add("launch_image", launchImage)
        return .object(fields)
    }
}

extension PushNotification.Sound {
    func intakeJSON() -> JSONValue {
        guard needsDictionary else { return .string(name) }
        var fields: [(key: String, value: JSONValue)] = [("name", .string(name))]
        if critical { fields.append(("critical", .bool(true))) }
        if let volume { fields.append(("volume", .double(volume))) }
        return .object(fields)
    }
}

extension Recipient {
    /// The recipient as the intake takes it: `{"token","platform"}`, or for a
    /// browser `{"platform":"web","subscription":{"endpoint","keys":{"p256dh","auth"}}}`.
    public func intakeJSON() -> JSONValue {
        if let webKeys {
            return .object([
                ("platform", .string(platform.rawValue)),
                ("subscription", .object([
                    ("endpoint", .string(token)),
                    ("keys", .object([("p256dh", .string(webKeys.p256dh)), ("auth", .string(webKeys.auth))])),
                ])),
            ])
        }
        return .object([("token", .string(token)), ("platform", .string(platform.rawValue))])
    }
}
