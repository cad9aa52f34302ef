/// What a web app's service worker receives in its `push` event
/// (`event.data.json()`), built from a notification.
///
/// The shape, one JSON object, members in this order and left out when absent:
///
/// ```json
/// {"id":"…","title":"…","body":"…","icon":"https://…","image":"https://…",
///  "badge":"https://…","tag":"…","url":"https://…","data":{"key":"value",…}}
/// ```
///
/// - `id`: the notification's id, so the page can publish a receipt for it.
/// - `title`, `body`: the text; a data-only notification (nothing to show) has neither.
/// - `icon`, `image`, `badge`: URLs as the Notifications API's options take them.
/// - `tag`: notifications with the same tag replace each other on the device.
/// - `url`: where a click on the notification leads.
/// - `data`: the notification's custom key/value pairs, keys sorted.
///
/// The service worker maps it onto `showNotification(title, {body, icon, image, badge, tag, data})`.
public struct WebPushNotificationPayload: Sendable, Equatable {
    public var id: String?
    public var title: String?
    public var body: String?
    public var icon: String?
    public var image: String?
    public var badge: String?
    public var tag: String?
    public var url: String?
    public var data: [String: String]

    public init(
        id: String? = nil, title: String? = nil, body: String? = nil, icon: String? = nil, image: String? = nil,
        badge: String? = nil, tag: String? = nil, url: String? = nil, data: [String: String] = [:]
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.icon = icon
        self.image = image
        self.badge = badge
        self.tag = tag
        self.url = url
        self.data = data
    }

    /// The payload as a JSON value (the documented shape).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let id { members.append(("id", .string(id))) }
        let optional: [(String, String?)] = [
            ("title", title), ("body", body), ("icon", icon), ("image", image), ("badge", badge), ("tag", tag), ("url", url),
        ]
        for (key, value) in optional {
            if let value { members.append((key, .string(value))) }
        }
        if !data.isEmpty {
            members.append(("data", .object(data.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        }
        return .object(members)
    }

    /// The UTF-8 JSON bytes to encrypt (compact, no insignificant whitespace).
    public func encoded() -> [UInt8] {
        json.encoded()
    }
}
