import Foundation
import PushCore

/// Compact JWS (JWT) building blocks: minimal JSON objects and the ES256 and
/// RS256 signatures; the parts are PushCore's `Base64URL`.
enum JWT {
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
        Base64URL.encode(jsonObject(header).utf8) + "." + Base64URL.encode(jsonObject(claims).utf8)
    }

    /// An ES256 JWT: ECDSA P-256 / SHA-256, signature as raw r||s.
    static func es256(header: [(String, Value)], claims: [(String, Value)], key: EVPKey) throws(ProviderError) -> String {
        let input = signingInput(header: header, claims: claims)
        let der = try key.signSHA256(Array(input.utf8))
        return input + "." + Base64URL.encode(try ECDSASignature.rawFromDER(der))
    }

    /// An RS256 JWT: RSASSA-PKCS1-v1_5 / SHA-256.
    static func rs256(header: [(String, Value)], claims: [(String, Value)], key: EVPKey) throws(ProviderError) -> String {
        let input = signingInput(header: header, claims: claims)
        return input + "." + Base64URL.encode(try key.signSHA256(Array(input.utf8)))
    }
}
