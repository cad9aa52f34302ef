import Foundation
import Logging
import PushCore
import PushHTTP

/// Where and as whom an `APNsClient` sends.
public struct APNsClientConfiguration: Sendable {
    /// Production APNs.
    public static let productionURL = "https://api.push.apple.com"
    /// Sandbox (development) APNs.
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    /// Scheme + host (+ port), no trailing slash.
    public var baseURL: String
    /// Apple Developer team ID.
    public var teamID: String
    /// ID of the `.p8` signing key.
    public var keyID: String
    /// The `.p8` key's PEM text.
    public var privateKeyPEM: String
    /// Age at which a new provider token is signed (Apple: 20–60 minutes).
    public var tokenRefreshInterval: Duration

    public init(
        baseURL: String = APNsClientConfiguration.productionURL, teamID: String, keyID: String,
        privateKeyPEM: String, tokenRefreshInterval: Duration = .seconds(3000)
    ) {
        self.baseURL = baseURL
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
        self.tokenRefreshInterval = tokenRefreshInterval
    }
}

/// Sends translated APNs requests with provider-token (JWT) authentication.
public final class APNsClient: Sendable {
    private let baseURL: String
    private let http: HTTP2Client
    private let logger: Logger
    /// The token provider (shared by every request of this client).
    public let tokens: APNsTokenProvider

    /// - Throws: `ProviderError.invalidKey` if the key cannot be used.
    public init(
        configuration: APNsClientConfiguration, http: HTTP2Client, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        self.baseURL = configuration.baseURL.hasSuffix("/")
            ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        self.http = http
        var logger = logger
        logger[metadataKey: "apns.key_id"] = "\(configuration.keyID)"
        self.logger = logger
        self.tokens = try APNsTokenProvider(
            teamID: configuration.teamID, keyID: configuration.keyID,
            privateKeyPEM: configuration.privateKeyPEM,
            refreshInterval: configuration.tokenRefreshInterval, now: now)
    }

    /// Sends `baseURL + request.path` with `request.headers`, the body and
    /// `authorization: bearer <jwt>`. A 403 `ExpiredProviderToken` refreshes
    /// the token and is retried once.
    /// - Throws: `HTTPError` for transport failures, `ProviderError` if signing fails.
    public func send(_ request: ProviderRequest) async throws -> ProviderResponse {
        let token = try tokens.currentToken()
        let response = try await post(request, token: token)
        guard response.status == 403, Self.reason(response.body) == "ExpiredProviderToken" else {
            return response
        }
        logger.info("apns.provider token expired; refreshing", metadata: ["apns.reason": "ExpiredProviderToken"])
        tokens.invalidate(ifCurrent: token)
        return try await post(request, token: try tokens.currentToken())
    }

    private func post(_ request: ProviderRequest, token: String) async throws -> ProviderResponse {
        var headers = request.headers.filter { $0.name.lowercased() != "authorization" }
        headers.append((name: "authorization", value: "bearer \(token)"))
        let response = try await http.execute(
            HTTPRequest(method: "POST", url: baseURL + request.path, headers: headers, body: request.body))
        return ProviderResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The `reason` of an APNs error body, if any.
    static func reason(_ body: [UInt8]) -> String? {
        struct ErrorBody: Decodable { var reason: String? }
        return (try? JSONDecoder().decode(ErrorBody.self, from: Data(body)))?.reason
    }
}
