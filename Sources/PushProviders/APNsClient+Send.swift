import Foundation
import PushCore
import PushHTTP

extension APNsClient {
    /// Sends `baseURL(for: environment) + request.path` with `request.headers`
    /// and the body, plus `authorization: bearer <jwt>` with token auth.
    ///
    /// Waits for a rate-limit slot; re-sends at once what got no HTTP status
    /// (GOAWAY, reset); on `403 ExpiredProviderToken` / `InvalidProviderToken`
    /// signs a new token once and retries; on `429 TooManyProviderTokenUpdates`
    /// keeps the token and backs off. Any other answer is returned as is.
    /// - Throws: `HTTPError` for transport failures; `ProviderError` when the
    ///   circuit is open or the rate limit holds the request back (retriable,
    ///   with `retryAfter`), on token throttling (retriable), when APNs rejects
    ///   the certificate (`.credentialsRejected`, not retriable) or signing fails.
    public func send(_ request: ProviderRequest, environment: APNsEnvironment? = nil) async throws -> ProviderResponse {
        let url = baseURL(for: environment) + request.path
        var refreshed = false
        while true {
            try await guardian.admit()
            let credential: APNsTokenProvider.Credential?
            do {
                credential = usesCertificateAuth ? nil : try tokens.currentCredential()
            } catch {
                guardian.release()
                throw error
            }
            let token = credential?.token
            let response = try await post(request, url: url, authorization: credential?.authorization)
            let reason = response.status == 403 || response.status == 429 ? Self.reason(response.body) : nil
            switch (response.status, reason) {
            case (403, "ExpiredProviderToken"?), (403, "InvalidProviderToken"?):
                guard let token, !refreshed else { return response }
                refreshed = true
                logger.info("apns.provider token rejected; signing a new one", metadata: ["apns.reason": "\(reason ?? "")"])
                tokens.invalidate(ifCurrent: token)
            case (429, "TooManyProviderTokenUpdates"?):
                let backoff = ProviderGuard.retryAfter(response.header("retry-after")) ?? tokenUpdateBackoffInterval
                logger.warning("apns.provider token updates throttled; backing off", metadata: ["apns.backoff": "\(backoff)"])
                tokens.holdMinting(for: backoff)
                guardian.pause(for: backoff)
                throw ProviderError.providerTokenThrottled(retryAfter: backoff)
            case (403, "BadCertificate"?), (403, "BadCertificateEnvironment"?):
                guard usesCertificateAuth, let reason else { return response }
                throw ProviderError.credentialsRejected(status: 403, reason: reason)
            default:
                return response
            }
        }
    }

    private func post(_ request: ProviderRequest, url: String, authorization: String?) async throws -> ProviderResponse {
        var headers = request.headers
        headers.removeAll { ProviderHeaders.isNamed($0.name, "authorization") }
        if let authorization { headers.append((name: "authorization", value: authorization)) }
        let response = try await guardian.execute(
            HTTPRequest(method: "POST", url: url, headers: headers, body: request.body), on: httpClient)
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The `reason` of an APNs error body, if any.
    static func reason(_ body: [UInt8]) -> String? {
        struct ErrorBody: Decodable { var reason: String? }
        return (try? JSONDecoder().decode(ErrorBody.self, from: Data(body)))?.reason
    }
}
