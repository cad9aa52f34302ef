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
    /// `priority`: its place while it waits for a stream slot of its host.
    /// - Throws: `HTTPError` for transport failures; `ProviderError` when the
    ///   circuit is open or the rate limit holds the request back (retriable,
    ///   with `retryAfter`), on token throttling (retriable), when APNs rejects
    ///   the certificate (`.credentialsRejected`, not retriable) or signing fails;
    ///   `.gateClosed` when `gate` closed before the request could go.
    public func send(_ request: ProviderRequest, environment: APNsEnvironment? = nil,
                     gate: SendGate? = nil, priority: HTTPRequestPriority = .urgent) async throws -> ProviderResponse {
        // Every request in flight keeps this frame: only what crosses an
        // await lives here; building the request and judging the answer are
        // synchronous and out of line.
        let url = baseURL(for: environment) + request.path
        var refreshed = false
        while true {
            try await guardian.admit()
            try guardian.pass(gate)
            let (http, token) = try prepare(request, url: url)
            let response = try await guardian.execute(http, on: httpClient, gate: gate, priority: priority)
            if let answer = try judge(response, token: token, refreshed: &refreshed) { return answer }
        }
    }

    /// The HTTP request with the current provider token (and that token);
    /// gives the admitted slot back if no token can be had.
    @inline(never)
    private func prepare(_ request: ProviderRequest, url: String) throws -> (HTTPRequest, String?) {
        let credential: APNsTokenProvider.Credential?
        do {
            credential = usesCertificateAuth ? nil : try tokens.currentCredential()
        } catch {
            guardian.release()
            throw error
        }
        let headers = ProviderHeaders.replacing(
            in: request.headers, dropping: "authorization",
            adding: credential.map { (name: "authorization", value: $0.authorization) })
        return (HTTPRequest(method: "POST", url: url, headers: headers, body: request.body), credential?.token)
    }

    /// The answer to return, or `nil` to send again with a new provider
    /// token (once, after 403 Expired/InvalidProviderToken).
    /// - Throws: on token throttling and on a rejected certificate.
    @inline(never)
    private func judge(_ http: HTTPResponse, token: String?, refreshed: inout Bool) throws -> ProviderResponse? {
        let response = ProviderResponse(status: http.status, headers: http.headers, body: http.body)
        let reason = response.status == 403 || response.status == 429 ? Self.reason(response.body) : nil
        switch (response.status, reason) {
        case (403, "ExpiredProviderToken"?), (403, "InvalidProviderToken"?):
            guard let token, !refreshed else { return response }
            refreshed = true
            logger.info("apns.provider token rejected; signing a new one", metadata: ["apns.reason": "\(reason ?? "")"])
            tokens.invalidate(ifCurrent: token)
            return nil
        case (429, "TooManyProviderTokenUpdates"?):
            let backoff = RetryAfter.parse(response.header("retry-after"), now: Date()) ?? tokenUpdateBackoffInterval
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

    /// The `reason` of an APNs error body, if any.
    static func reason(_ body: [UInt8]) -> String? {
        struct ErrorBody: Decodable { var reason: String? }
        return (try? JSONDecoder().decode(ErrorBody.self, from: Data(body)))?.reason
    }
}
