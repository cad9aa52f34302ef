import PushCore

/// A compact-serialised JWT split into its parts (RFC 7519). Parsing checks
/// only the shape; signatures and claims are checked by the caller.
struct JWT: Sendable {
    /// The header object (`alg`, `kid`, …).
    let header: JSONValue
    /// The claims object (`iss`, `iat`, …).
    let claims: JSONValue
    /// `base64url(header) "." base64url(claims)`: the bytes that were signed.
    let signingInput: [UInt8]
    let signature: [UInt8]

    init?(_ token: Substring) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONValue.parse(headerBytes), header.objectMembers != nil,
            let claims = try? JSONValue.parse(claimBytes), claims.objectMembers != nil
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Array(token.utf8[..<parts[1].endIndex])
        self.signature = signature
    }

    var algorithm: String? { header["alg"]?.stringValue }
    var keyID: String? { header["kid"]?.stringValue }
}
