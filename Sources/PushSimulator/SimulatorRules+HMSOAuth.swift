import Foundation

/// Huawei's OAuth 2.0 token endpoint for app-level tokens: `POST /oauth2/v3/token`
/// with `grant_type=client_credentials&client_id=…&client_secret=…` (form-encoded),
/// answering `{"access_token":…,"expires_in":3600,"token_type":"Bearer"}`.
/// Errors use Huawei's shape `{"error":1101,"sub_error":N,"error_description":"…"}`
/// with the sub-error codes of Account Kit's server error table
/// (developer.huawei.com/consumer/en/doc/HMSCore-References/server-error-codes-0000001062371380):
/// 20003 unknown client_id, 12304 wrong client_secret, 20182 wrong grant_type.
extension SimulatorRules {
    static let hmsTokenPath = "/oauth2/v3/token"
    /// Issued HMS tokens are kept in the shared token table under this project prefix.
    static let hmsGrantPrefix = "hms:"

    func respondHMSOAuth(to request: SimulatorRequest, now: Date) -> SimulatorResponse {
        guard request.method == "POST" else {
            return Self.hmsOAuthError(status: 405, error: 1101, subError: 0, description: "method not allowed")
        }
        let form = Self.parseForm(request.body)
        guard form["grant_type"] == "client_credentials" else {
            return Self.hmsOAuthError(status: 400, error: 1101, subError: 20182, description: "invalid grant_type")
        }
        guard let clientID = form["client_id"], let app = hmsApps[clientID] else {
            return Self.hmsOAuthError(status: 400, error: 1101, subError: 20003, description: "invalid client_id")
        }
        guard form["client_secret"] == app.clientSecret else {
            return Self.hmsOAuthError(status: 400, error: 1101, subError: 12304, description: "invalid client_secret")
        }
        var random = SystemRandomNumberGenerator()
        let tokenBytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
        // Huawei's tokens are base64 with `/`, `+` and `=` (its guide warns about `\/` escaping).
        let accessToken = "CF3Xsim/" + Data(tokenBytes).base64EncodedString()
        let lifetime = max(1, app.tokenLifetimeSeconds)
        state.issue(
            accessToken: accessToken,
            grant: .init(
                projectID: Self.hmsGrantPrefix + app.appID, clientEmail: app.appID,
                expires: now.addingTimeInterval(TimeInterval(lifetime))),
            now: now)
        let body = "{\"access_token\":\(JSONWriter.quoted(accessToken)),\"expires_in\":\(lifetime),\"token_type\":\"Bearer\"}"
        return SimulatorResponse(
            status: 200, headers: [("content-type", "application/json;charset=UTF-8")], body: Array(body.utf8),
            provider: "hms-oauth", reason: "OK")
    }

    static func hmsOAuthError(status: Int, error: Int, subError: Int, description: String) -> SimulatorResponse {
        let body = "{\"error\":\(error),\"sub_error\":\(subError),\"error_description\":\(JSONWriter.quoted(description))}"
        return SimulatorResponse(
            status: status, headers: [("content-type", "application/json;charset=UTF-8")], body: Array(body.utf8),
            provider: "hms-oauth", reason: "\(error).\(subError)")
    }
}
