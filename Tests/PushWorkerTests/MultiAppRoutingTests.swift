import Foundation
import Logging
import XCTest
@testable import PushWorker

/// Many apps in one fleet: each app gets its own clients, credentials,
/// APNs topic and FCM project; an unknown app has none.
final class MultiAppRoutingTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "pushfleet-apps-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Runs openssl to make a real key (APNs .p8 / RSA for a service account).
    private func openssl(_ arguments: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "openssl \(arguments) 2>/dev/null"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments)")
    }

    private func serviceAccount(project: String) throws -> String {
        let keyPath = dir + "/\(project).pem"
        try openssl("genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out '\(keyPath)'")
        let account: [String: String] = [
            "type": "service_account", "project_id": project, "private_key_id": "k1",
            "private_key": try String(contentsOfFile: keyPath, encoding: .utf8),
            "client_email": "push@\(project).iam.gserviceaccount.com",
            "token_uri": "https://oauth2.example.test/token",
        ]
        let path = dir + "/\(project).json"
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testEachAppGetsItsOwnClientsAndTranslationContext() throws {
        let p8 = dir + "/AuthKey_KEY1.p8"
        try openssl("ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '\(p8)'")
        var config = WorkerConfiguration()
        config.apps["com.example.shop"] = .init(
            apns: .init(topic: "com.example.shop", teamID: "TEAM000001", keyID: "KEY1", keyPath: p8),
            fcm: .init(serviceAccountPath: try serviceAccount(project: "shop-prod")))
        var newsFCM = WorkerConfiguration.FCM(serviceAccountPath: try serviceAccount(project: "news-prod"))
        newsFCM.rateLimitPerSecond = 250
        config.apps["com.example.news"] = .init(apns: nil, fcm: newsFCM)
        config.apps["com.example.watch"] = .init(
            apns: .init(topic: "com.example.watch", teamID: "TEAM000002", keyID: "KEY1", keyPath: p8,
                        baseURL: "https://api.sandbox.push.apple.com"),
            fcm: nil)

        // A fourth app on APNs certificate auth (PEM certificate + key).
        let cert = dir + "/legacy.pem", certKey = dir + "/legacy.key"
        try openssl("req -x509 -newkey rsa:2048 -nodes -subj '/CN=Apple Push Services: com.example.legacy' -days 1 -keyout '\(certKey)' -out '\(cert)'")
        var legacy = WorkerConfiguration.APNs(topic: "com.example.legacy", teamID: "", keyID: "", keyPath: "")
        legacy.certificate = .init(path: cert, keyPath: certKey)
        legacy.sandboxBaseURL = "https://api.sandbox.push.apple.com"
        config.apps["com.example.legacy"] = .init(apns: legacy, fcm: nil)

        let router = try ProviderRouter(configuration: config, logger: Logger(label: "test"))
        defer { router.shutdown() }

        let shop = try XCTUnwrap(router.clients(for: "com.example.shop"))
        XCTAssertEqual(shop.context.apnsTopic, "com.example.shop")
        XCTAssertEqual(shop.context.fcmProjectID, "shop-prod")
        XCTAssertNotNil(shop.apns)
        XCTAssertNotNil(shop.fcm)

        let news = try XCTUnwrap(router.clients(for: "com.example.news"))
        XCTAssertNil(news.apns, "an FCM-only app has no APNs client")
        XCTAssertEqual(news.context.fcmProjectID, "news-prod")
        XCTAssertEqual(news.fcm?.stats().currentRate, 250, "the app's own rate limit")
        XCTAssertEqual(shop.fcm?.stats().currentRate, 10_000, "FCM's default: 600,000 per minute")
        XCTAssertNil(news.context.apnsTopic)

        let watch = try XCTUnwrap(router.clients(for: "com.example.watch"))
        XCTAssertNil(watch.fcm)
        XCTAssertEqual(watch.apns?.host, "https://api.sandbox.push.apple.com")
        XCTAssertEqual(shop.apns?.host, "https://api.push.apple.com")

        let legacyClients = try XCTUnwrap(router.clients(for: "com.example.legacy"))
        XCTAssertEqual(legacyClients.context.apnsTopic, "com.example.legacy")
        XCTAssertEqual(legacyClients.apns?.usesCertificateAuth, true)
        XCTAssertEqual(shop.apns?.usesCertificateAuth, false)

        XCTAssertNil(router.clients(for: "com.example.unknown"), "an unknown app has no clients (rejected as UnknownApp)")

        let stats = router.allStats()
        XCTAssertEqual(stats.map { "\($0.app)/\($0.provider)" },
                       ["com.example.legacy/apns", "com.example.news/fcm", "com.example.shop/apns",
                        "com.example.shop/fcm", "com.example.watch/apns"])
    }

    func testAnUnreadableCredentialNamesTheAppKey() throws {
        var config = WorkerConfiguration()
        config.apps["com.example.shop"] = .init(
            apns: .init(topic: "com.example.shop", teamID: "T", keyID: "K", keyPath: dir + "/missing.p8"), fcm: nil)
        XCTAssertThrowsError(try ProviderRouter(configuration: config, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.key, "apps.com.example.shop.apns.key_path")
        }
    }

    /// A Push Kit app secret that cannot be one (not UTF-8, empty, several
    /// lines, a directory) stops start-up as a bad configuration naming the
    /// key, instead of being sent to Huawei's token endpoint for ever.
    func testAnUnusablePushKitSecretNamesTheAppKey() throws {
        let cases: [(String, [UInt8]?)] = [
            ("latin1", Array("s3cr\u{E9}t".utf8.dropLast(3)) + [0xE9, 0x74]), ("binary", [0xFF, 0xFE, 0x00, 0x41]),
            ("empty", Array(" \n".utf8)), ("two-lines", Array("first-secret\nsecond-secret\n".utf8)),
            ("control", Array("abc\u{1B}[0mdef".utf8)), ("directory", nil),
        ]
        for (name, bytes) in cases {
            let path = dir + "/hms-\(name).secret"
            if let bytes {
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            } else {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            var config = WorkerConfiguration()
            config.apps["com.example.shop"] = .init(apns: nil, fcm: nil, hms: .init(appID: "101234567", clientSecretPath: path))
            XCTAssertThrowsError(try ProviderRouter(configuration: config, logger: Logger(label: "test")), name) { error in
                XCTAssertEqual((error as? ConfigurationError)?.key, "apps.com.example.shop.hms.client_secret_path", "\(name): \(error)")
            }
        }
        // One line with its newline, as `echo secret > file` writes it, is a secret.
        let good = dir + "/hms-good.secret"
        try Data("6a7f0e1b2c3d4e5f\n".utf8).write(to: URL(fileURLWithPath: good))
        var config = WorkerConfiguration()
        config.apps["com.example.shop"] = .init(apns: nil, fcm: nil, hms: .init(appID: "101234567", clientSecretPath: good))
        let router = try ProviderRouter(configuration: config, logger: Logger(label: "test"))
        XCTAssertNotNil(router.clients(for: "com.example.shop")?.hms)
        router.shutdown()
    }
}
