import Foundation

/// Compact JWS (JWT) building blocks: base64url and minimal JSON objects.
enum JWT {
    /// base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes base64url with or without padding; `nil` if malformed.
    static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }

    /// A JSON object member value: a string or an integer.
    enum Value {
        case string(String)
        case int(Int)
    }

    /// Serialises members in the given order (no whitespace).
    static func jsonObject(_ members: [(String, Value)]) -> String {
        let body = members.map { key, value -> String in
            switch value {
            case .string(let text): return "\(jsonString(key)):\(jsonString(text))"
            case .int(let number): return "\(jsonString(key)):\(number)"
            }
        }
        return "{" + body.joined(separator: ",") + "}"
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `base64url(header).base64url(claims)`: the signing input.
    static func signingInput(header: [(String, Value)], claims: [(String, Value)]) -> String {
        base64URL(Array(jsonObject(header).utf8)) + "." + base64URL(Array(jsonObject(claims).utf8))
    }

    /// An ES256 JWT: ECDSA P-256 / SHA-256, signature as raw r||s.
    static func es256(header: [(String, Value)], claims: [(String, Value)], key: EVPKey) throws(ProviderError) -> String {
        let input = signingInput(header: header, claims: claims)
        let der = try key.signSHA256(Array(input.utf8))
        return input + "." + base64URL(try ECDSASignature.rawFromDER(der))
    }

    /// An RS256 JWT: RSASSA-PKCS1-v1_5 / SHA-256.
    static func rs256(header: [(String, Value)], claims: [(String, Value)], key: EVPKey) throws(ProviderError) -> String {
        let input = signingInput(header: header, claims: claims)
        return input + "." + base64URL(try key.signSHA256(Array(input.utf8)))
    }
}
