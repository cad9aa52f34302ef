/// A Huawei Push Kit app as the simulator knows it: the OAuth client
/// credentials its token endpoint accepts and the app id its send endpoint serves.
public struct SimulatorHMSApp: Sendable, Codable, Equatable {
    /// The app id (OAuth client id), digits: `client_id` and the `<appId>` of `/v1/<appId>/messages:send`.
    public var appID: String
    /// The app secret (OAuth client secret).
    public var clientSecret: String
    /// The OAuth client id grants must name, when it is not the app id.
    public var clientID: String?
    /// Lifetime of the access tokens issued (Push Kit's: 3600 s); tests shorten it to see a token expire.
    public var tokenLifetimeSeconds: Int

    public init(appID: String, clientSecret: String, tokenLifetimeSeconds: Int = 3600, clientID: String? = nil) {
        self.appID = appID
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case appID = "appId", clientSecret, tokenLifetimeSeconds, clientID = "clientId"
    }

    /// Decodes with `tokenLifetimeSeconds` (3600) and `clientId` optional; a key it does not know is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appID = try container.decode(String.self, forKey: .appID)
        clientSecret = try container.decode(String.self, forKey: .clientSecret)
        tokenLifetimeSeconds = try container.decodeIfPresent(Int.self, forKey: .tokenLifetimeSeconds) ?? 3600
        clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
    }
}
