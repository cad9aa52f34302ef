import Foundation

extension FCMTranslator {
    /// `message`'s bytes appended to `out`, written straight from the member
    /// lists (`forEachMessageMember` and the lists it leads to) instead of
    /// through a tree; only a block that `fcm.*` overrides merge into (and the
    /// topic `apns` block) is built as a tree first. The same bytes as
    /// `messageMembers` encoded.
    static func writeMessage(for n: PushNotification, target: Target, now: Date?, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var message = JSONValue.ObjectWriter()
        forEachMessageMember(of: n, target: target, now: now) { key, member in
            switch member {
            case .value(let value):
                message.member(key, value, into: &out)
            case .notification:
                message.object(key, dropIfEmpty: true, into: &out) { fields, out in
                    forEachNotificationField(of: n) { fields.member($0, .string($1), into: &out) }
                }
            case .data:
                message.object(key, into: &out) { data, out in
                    for member in n.data { data.member(member.key, dataValue(member.value), into: &out) }
                }
            case .android(let hasAlert):
                guard n.fcm.android.isEmpty else {
                    // The overrides deep-merge into the generated members: build this block as a tree.
                    message.member(key, .object(JSONValue.merge(android(for: n, hasAlert: hasAlert, now: now), n.fcm.android)), into: &out)
                    return
                }
                message.object(key, into: &out) { android, out in
                    writeAndroid(of: n, hasAlert: hasAlert, now: now, into: &android, &out)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `AndroidConfig`'s members as `forEachAndroidMember` lists them, written straight out.
    private static func writeAndroid(of n: PushNotification, hasAlert: Bool, now: Date?,
                                     into android: inout JSONValue.ObjectWriter, _ out: inout [UInt8]) {
        forEachAndroidMember(of: n, hasAlert: hasAlert, now: now) { key, member in
            switch member {
            case .value(let value):
                android.member(key, value, into: &out)
            case .notification:
                android.object(key, dropIfEmpty: true, into: &out) { fields, out in
                    forEachAndroidNotificationField(of: n) { fields.member($0, $1, into: &out) }
                }
            }
        }
    }

    /// Enough for `{"message":…}` in its usual shape (keys, punctuation and
    /// the notification's own strings) so it is written without regrowing.
    static func estimatedMessageBytes(for n: PushNotification, target: Target) -> Int {
        var bytes = 128  // the wrapper, target key, android priority/ttl, braces
        switch target {
        case .token(let s): bytes += s.utf8.count
        case .topic(let s), .condition(let s): bytes += s.utf8.count + 384  // and the generated apns block
        }
        if let alert = n.alert {
            bytes += 96 + (alert.title?.utf8.count ?? 0) + (alert.body?.utf8.count ?? 0) + (n.imageURL?.utf8.count ?? 0)
        }
        bytes += 2 * (n.collapseKey?.utf8.count ?? 0) + (n.category?.utf8.count ?? 0) + (n.sound?.name.utf8.count ?? 0)
        for member in n.data {
            bytes += 6 + member.key.utf8.count
            if case .string(let s) = member.value { bytes += s.utf8.count } else { bytes += 32 }
        }
        if !n.fcm.isEmpty { bytes += 256 }
        return bytes
    }
}
