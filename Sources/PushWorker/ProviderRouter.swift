import Foundation
import Logging
import PushCore
import PushHTTP
import PushProviders

/// The provider clients of every configured app, sharing one HTTP/2 engine.
final class ProviderRouter: Sendable {
    struct AppClients: Sendable {
        var context: TranslationContext
        var apns: APNsClient?
        var fcm: FCMClient?
    }

    let http: HTTP2Client
    private let apps: [String: AppClients]

    init(configuration: WorkerConfiguration, logger: Logger) throws {
        var httpConfiguration = HTTPClientConfiguration()
        httpConfiguration.caBundlePath = configuration.tls.caBundlePath
        httpConfiguration.maxConnectionsPerHost = configuration.tls.maxConnectionsPerHost
        let http = try HTTP2Client(configuration: httpConfiguration, logger: logger)
        var apps: [String: AppClients] = [:]
        do {
            for (name, app) in configuration.apps {
                var appLogger = logger
                appLogger[metadataKey: "push.app"] = "\(name)"
                var clients = AppClients(context: TranslationContext(apnsTopic: app.apns?.topic, fcmProjectID: nil))
                if let apns = app.apns {
                    guard let pem = FileManager.default.contents(atPath: apns.keyPath) else {
                        throw ConfigurationError(key: "apps.\(name).apns.key_path", problem: "cannot read \(apns.keyPath)")
                    }
                    clients.apns = try APNsClient(
                        configuration: APNsClientConfiguration(
                            baseURL: apns.baseURL, teamID: apns.teamID, keyID: apns.keyID,
                            privateKeyPEM: String(decoding: pem, as: UTF8.self)),
                        http: http, logger: appLogger)
                }
                if let fcm = app.fcm {
                    let account: FCMServiceAccount
                    do { account = try FCMServiceAccount.load(path: fcm.serviceAccountPath) } catch {
                        throw ConfigurationError(key: "apps.\(name).fcm.service_account_path", problem: "\(error)")
                    }
                    clients.context.fcmProjectID = account.projectID
                    clients.fcm = try FCMClient(
                        configuration: FCMClientConfiguration(
                            baseURL: fcm.baseURL, serviceAccount: account, tokenURIOverride: fcm.tokenURI),
                        http: http, logger: appLogger)
                }
                apps[name] = clients
            }
        } catch {
            http.shutdown()
            throw error
        }
        self.http = http
        self.apps = apps
    }

    func clients(for app: String) -> AppClients? { apps[app] }

    func shutdown() { http.shutdown() }
}

extension ProviderRouter.AppClients {
    /// Sends through the client for `request.provider`; nil when the app has none.
    func send(_ request: ProviderRequest) async throws -> ProviderResponse? {
        switch request.provider {
        case .apns: return try await apns?.send(request)
        case .fcm: return try await fcm?.send(request)
        }
    }

    func serves(_ platform: Platform) -> Bool {
        switch platform.provider {
        case .apns: apns != nil
        case .fcm: fcm != nil
        }
    }
}
