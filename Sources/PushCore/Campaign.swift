/// A notification's campaign tag (`campaign` in the envelope): the name
/// analysts group deliveries by, the kill switch stops, and FCM's
/// `fcm_options.analytics_label` defaults to. One rule for every place that
/// takes a campaign name: intake, the `pushfleet campaign` commands and the
/// worker's cancelled set.
public enum Campaign {
    /// A campaign is at most this many UTF-8 bytes: a name, not a message.
    /// It is stored on every delivery row it makes and keys an index there.
    public static let maxBytes = 128

    /// Why `name` cannot be a campaign, nil when it can: 1 to `maxBytes`
    /// UTF-8 bytes of printable text, no control character (U+0000-U+001F,
    /// U+007F-U+009F): a campaign is printed by the commands, the report and
    /// the logs, one per line.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > maxBytes { return "longer than \(maxBytes) bytes" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "contains a control character (U+0000-U+001F or U+007F-U+009F)"
        }
        return nil
    }

    /// The FCM `analytics_label` a notification of `campaign` carries when
    /// it sets none itself: the campaign, when it is a valid label
    /// (`FCMTranslator.isValidAnalyticsLabel`); otherwise none, since FCM
    /// refuses the whole message for a bad label.
    public static func analyticsLabel(for campaign: String?) -> String? {
        guard let campaign, FCMTranslator.isValidAnalyticsLabel(campaign) else { return nil }
        return campaign
    }
}
