import PushCore

/// Strict base64url (RFC 4648 §5) for subscription keys: only the URL-safe
/// alphabet, with optional trailing `=` padding, as browsers' `PushSubscription`
/// JSON carries it. (`JWT.decodeBase64URL` is lenient; keys must not be.)
/// Decoding is PushCore's `Base64URL`, which intake validation uses too.
public enum WebPushBase64URL {
    /// Encodes without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        JWT.base64URL(bytes)
    }

    /// Decodes; nil on any character outside the alphabet, misplaced padding or an impossible length.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        Base64URL.decode(text)
    }

    /// Whether every character is in the base64url alphabet (no padding).
    static func isAlphabet(_ text: some StringProtocol) -> Bool {
        Base64URL.isAlphabet(text)
    }
}
