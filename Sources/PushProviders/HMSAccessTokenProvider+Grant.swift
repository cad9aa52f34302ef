import Foundation
import PushCore
import PushHTTP

extension HMSAccessTokenProvider {
    /// `application/x-www-form-urlencoded` value: everything but RFC 3986
    /// unreserved characters percent-encoded (app secrets may hold `+`, `/`, `=`).
    static func formEncoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// The grant's form body.
    var grantBody: String {
        "grant_type=client_credentials&client_id=\(Self.formEncoded(appID))&client_secret=\(Self.formEncoded(clientSecret))"
    }

    /// Posts the client credentials grant; returns the token and its lifetime in seconds.
    func fetch() async throws -> (String, Double) {
        let request = HTTPRequest(
            method: "POST", url: tokenURL,
            headers: [
                (name: "content-type", value: "application/x-www-form-urlencoded"),
                (name: "accept", value: "application/json"),
            ],
            body: Array(grantBody.utf8))
        let response: HTTPResponse
        do {
            response = try await httpClient.execute(request)
        } catch let error as HTTPError {
            throw ProviderError.tokenEndpointTransport(error)
        }
        let json = try? JSONValue.parse(response.body)
        guard response.status == 200 else {
            // Huawei's error body: {"error":1101,"sub_error":20003,"error_description":"…"}, numbers
            // (Account Kit server error codes, developer.huawei.com/consumer/en/doc/doccenter-references/api/account-server-error-code/).
            let error = HMSAnswer.text(json?["error"])
            var description = json?["error_description"]?.stringValue
            if let sub = HMSAnswer.text(json?["sub_error"]) { description = "sub_error \(sub)" + (description.map { ": \($0)" } ?? "") }
            throw ProviderError.tokenEndpoint(status: response.status, error: error, description: description)
        }
        guard let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            throw ProviderError.invalidTokenResponse("token endpoint answered 200 without an access_token")
        }
        guard ProviderHeaders.isBearerToken(token) else {
            throw ProviderError.invalidTokenResponse(ProviderHeaders.notABearerToken)
        }
        // `expires_in` is normally 3600; anything unusable or tiny counts as a minute.
        let lifetime = json?["expires_in"]?.numberValue.flatMap { $0.isFinite ? $0 : nil } ?? 3600
        return (token, min(max(60, lifetime), 86_400))
    }
}
