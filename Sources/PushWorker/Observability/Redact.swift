/// Shortening of sensitive values for logs.
public enum Redact {
    /// A device token as its first 6 characters, an ellipsis and its length
    /// (`"a1b2c3…64"`): enough to correlate log lines with the device
    /// registry, too little to send to the device. Tokens of 6 characters
    /// or fewer show only their length.
    public static func token(_ token: String) -> String {
        let count = token.count
        guard count > 6 else { return "…\(count)" }
        return "\(token.prefix(6))…\(count)"
    }
}
