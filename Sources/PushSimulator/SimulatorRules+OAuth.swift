import Crypto
import Foundation
import PushCore
import _CryptoExtras

/// Google's OAuth 2.0 token endpoint for service accounts ("Using OAuth 2.0
/// for Server to Server Applications"): `POST /token` with a JWT bearer grant.
/// Errors use Google's shape `{"error":"…","error_description":"…"}`.
extension SimulatorRules {
    static let jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let accessTokenLifetime: Int64 = 3600

    func respondOAuth(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        guard request.method == "POST" else {
            return Self.oauthError(status: 405, error: "invalid_request", description: "Method not allowed.")
        }
        if let scenario = scenarioResponse(provider: "oauth", apnsID: nil, now: now) { return scenario }
        let form = Self.parseForm(request.body)
        guard form["grant_type"] == Self.jwtBearerGrantType else {
            return Self.oauthError(
                status: 400, error: "unsupported_grant_type",
                description: "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], let jwt = JWT(Substring(assertion)) else {
            return Self.invalidGrant("Invalid JWT: the assertion is not a JWT.")
        }
        guard jwt.algorithm == "RS256", let keyID = jwt.keyID, let account = fcmAccounts[keyID],
            account.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jwt.signature), for: jwt.signingInput,
                padding: .insecurePKCS1v1_5)
        else { return Self.invalidGrant("Invalid JWT Signature.") }
        guard jwt.claims["iss"]?.stringValue == account.clientEmail else {
            return Self.invalidGrant("Invalid email or User ID")
        }
        guard let audience = jwt.claims["aud"]?.stringValue, isOwnTokenURI(audience) else {
            return Self.invalidGrant("Invalid JWT: Failed audience check.")
        }
        let nowSeconds = Self.seconds(since: now)
        guard let issuedAt = jwt.claims["iat"]?.integerValue, let expires = jwt.claims["exp"]?.integerValue,
            expires > issuedAt, expires - issuedAt <= Self.accessTokenLifetime, expires > nowSeconds,
            issuedAt <= nowSeconds + 300
        else {
            return Self.invalidGrant(
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    + "Check your iat and exp values in the JWT claim.")
        }
        let scopes = (jwt.claims["scope"]?.stringValue ?? "").split(separator: " ")
        guard scopes.contains(Substring(Self.firebaseMessagingScope)) else {
            return Self.oauthError(
                status: 400, error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }

        var random = SystemRandomNumberGenerator()
        let tokenBytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
        let accessToken = "ya29.sim-" + Base64URL.encode(tokenBytes)
        state.issue(
            accessToken: accessToken,
            grant: .init(
                projectID: account.projectID, clientEmail: account.clientEmail,
                expires: now.addingTimeInterval(TimeInterval(Self.accessTokenLifetime))),
            now: now)
        let body = "{\"access_token\":\(JSONWriter.quoted(accessToken)),\"expires_in\":3599,\"token_type\":\"Bearer\"}"
        return SimulatorResponse(
            status: 200, headers: [("content-type", "application/json; charset=utf-8")], body: Array(body.utf8),
            provider: "oauth", reason: "OK")
    }

    /// Whether `audience` is this server's token URI: an https URL whose path is
    /// `/token`, on this server's port once it is known.
    private func isOwnTokenURI(_ audience: String) -> Bool {
        guard let components = URLComponents(string: audience), components.scheme == "https",
            components.path == "/token"
        else { return false }
        let port = serverPort
        return port == 0 || (components.port ?? 443) == port
    }

    /// `application/x-www-form-urlencoded` → name/value (first wins).
    static func parseForm(_ body: [UInt8]) -> [String: String] {
        var form: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            if form[name] == nil { form[name] = value }
        }
        return form
    }

    static func invalidGrant(_ description: String) -> SimulatorResponse {
        oauthError(status: 400, error: "invalid_grant", description: description)
    }

    static func oauthError(status: Int, error: String, description: String) -> SimulatorResponse {
        let body = "{\"error\":\(JSONWriter.quoted(error)),\"error_description\":\(JSONWriter.quoted(description))}"
        return SimulatorResponse(
            status: status, headers: [("content-type", "application/json; charset=utf-8")], body: Array(body.utf8),
            provider: "oauth", reason: error)
    }
}
