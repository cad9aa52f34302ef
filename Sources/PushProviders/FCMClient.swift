import Foundation
import Logging
import PushCore
import PushHTTP

/// Where and as whom an `FCMClient` sends.
public struct FCMClientConfiguration: Sendable {
    /// Scheme + host (+ port), no trailing slash; default `https://fcm.googleapis.com`.
    public var baseURL: String
    /// The service account whose OAuth tokens authorise the sends.
    public var serviceAccount: FCMServiceAccount
    /// Where to POST the OAuth grant instead of the account's `token_uri`.
    public var tokenURIOverride: String?

    public init(
        baseURL: String = "https://fcm.googleapis.com", serviceAccount: FCMServiceAccount,
        tokenURIOverride: String? = nil
    ) {
        self.baseURL = baseURL
        self.serviceAccount = serviceAccount
        self.tokenURIOverride = tokenURIOverride
    }
}

/// Sends translated FCM HTTP v1 requests with a service-account OAuth token.
public final class FCMClient: Sendable {
    private let baseURL: String
    private let http: HTTP2Client
    private let logger: Logger
    /// The OAuth token provider (shared by every request of this client).
    public let tokens: FCMAccessTokenProvider

    /// - Throws: `ProviderError.invalidKey` if the account's key cannot be used.
    public init(
        configuration: FCMClientConfiguration, http: HTTP2Client, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        self.baseURL = configuration.baseURL.hasSuffix("/")
            ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        self.http = http
        var logger = logger
        logger[metadataKey: "fcm.project_id"] = "\(configuration.serviceAccount.projectID)"
        self.logger = logger
        self.tokens = try FCMAccessTokenProvider(
            account: configuration.serviceAccount, http: http,
            tokenURIOverride: configuration.tokenURIOverride, now: now, logger: logger)
    }

    /// Sends `baseURL + request.path` with `authorization: Bearer <token>` and
    /// a JSON content type. A 401 invalidates the token and is retried once.
    /// - Throws: `HTTPError` for transport failures of the send,
    ///   `ProviderError` when no access token can be had.
    public func send(_ request: ProviderRequest) async throws -> ProviderResponse {
        let token = try await tokens.accessToken()
        let response = try await post(request, token: token)
        guard response.status == 401 else { return response }
        logger.info("fcm.access token rejected; fetching a new one", metadata: ["http.status": "401"])
        tokens.invalidate(token: token)
        return try await post(request, token: try await tokens.accessToken())
    }

    private func post(_ request: ProviderRequest, token: String) async throws -> ProviderResponse {
        var headers = request.headers.filter {
            let name = $0.name.lowercased()
            return name != "authorization" && name != "content-type"
        }
        headers.append((name: "authorization", value: "Bearer \(token)"))
        headers.append((name: "content-type", value: "application/json; charset=utf-8"))
        let response = try await http.execute(
            HTTPRequest(method: "POST", url: baseURL + request.path, headers: headers, body: request.body))
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
