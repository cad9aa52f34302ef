/// Text from input or from a server, cut to a budget of UTF-8 bytes before
/// it is stored, logged or put in a header. Counted in bytes, not in
/// `Character`s: one grapheme cluster can be any length ("a" and 100,000
/// combining accents is one `Character` of 200 KB).
public enum BoundedText {
    /// `text` cut on a Unicode scalar boundary to at most `maxBytes` UTF-8
    /// bytes, ending in `…` (3 bytes, within the budget) when it was cut.
    /// A `maxBytes` under 4 keeps nothing but the `…`.
    public static func cut(_ text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard bytes + size <= maxBytes - 3 else { break }
            kept.append(scalar)
            bytes += size
        }
        return String(kept) + "…"
    }
}
