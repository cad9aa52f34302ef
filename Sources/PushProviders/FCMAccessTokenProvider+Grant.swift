import Foundation
import PushHTTP

extension FCMAccessTokenProvider {
    /// The signed grant assertion for `issuedAt` (seconds since 1970).
    func assertion(issuedAt: Int) throws(ProviderError) -> String {
        try JWT.rs256(
            header: [("alg", .string("RS256")), ("typ", .string("JWT")), ("kid", .string(accountKeyID))],
            claims: [
                ("iss", .string(accountEmail)), ("scope", .string(Self.scope)), ("aud", .string(grantURL)),
                ("iat", .int(issuedAt)), ("exp", .int(issuedAt + 3600)),
            ],
            key: signingKey)
    }

    /// Posts the JWT bearer grant; returns the token and its lifetime in seconds.
    func fetch() async throws -> (String, Double) {
        let issuedAt = Int(currentTime().timeIntervalSince1970)
        let body = "grant_type=\(Self.grantType)&assertion=\(try assertion(issuedAt: issuedAt))"
        let request = HTTPRequest(
            method: "POST", url: grantURL,
            headers: [
                (name: "content-type", value: "application/x-www-form-urlencoded"),
                (name: "accept", value: "application/json"),
            ],
            body: Array(body.utf8))
        let response: HTTPResponse
        do {
            response = try await httpClient.execute(request)
        } catch let error as HTTPError {
            throw ProviderError.tokenEndpointTransport(error)
        }
        guard response.status == 200 else {
            let failure = try? JSONDecoder().decode(OAuthErrorBody.self, from: Data(response.body))
            throw ProviderError.tokenEndpoint(
                status: response.status, error: failure?.error, description: failure?.errorDescription)
        }
        guard let token = try? JSONDecoder().decode(OAuthTokenBody.self, from: Data(response.body)),
            !token.accessToken.isEmpty
        else {
            throw ProviderError.invalidTokenResponse("token endpoint answered 200 without an access_token")
        }
        guard ProviderHeaders.isBearerToken(token.accessToken) else {
            throw ProviderError.invalidTokenResponse(ProviderHeaders.notABearerToken)
        }
        // Google says 3600; anything tiny counts as a minute, anything past a day as a day
        // (as Push Kit's): a token server's huge expires_in must not pin one token for good.
        return (token.accessToken, Double(min(max(60, token.expiresIn ?? 3600), 86_400)))
    }
}

struct OAuthTokenBody: Decodable {
    var accessToken: String
    var expiresIn: Int?
    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case expiresIn = "expires_in"
    }
}

struct OAuthErrorBody: Decodable {
    var error: String?
    var errorDescription: String?
    private enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
