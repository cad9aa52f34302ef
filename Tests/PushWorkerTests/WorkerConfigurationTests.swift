import Foundation
import PushProviders
import XCTest
@testable import PushWorker

/// Configuration is validated at start; every error names the key and the problem.
final class WorkerConfigurationTests: XCTestCase {
    private func write(_ json: String) throws -> String {
        let path = NSTemporaryDirectory() + "pushfleet-config-\(UUID().uuidString).json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    private func loadError(_ json: String, env: [String: String] = [:]) throws -> ConfigurationError {
        let path = try write(json)
        do {
            _ = try WorkerConfiguration.load(path: path, environment: env)
        } catch let error as ConfigurationError {
            return error
        }
        XCTFail("configuration was accepted: \(json)")
        return ConfigurationError(key: "", problem: "")
    }

    func testValidFileLoadsAndEnvironmentOverrides() throws {
        let path = try write("""
            {"kafka": {"bootstrap_servers": "k1:9092", "properties": {"fetch.min.bytes": "1"}},
             "database": {"url": "postgresql://db/push"},
             "apps": {"shop": {"fcm": {"service_account_path": "/secrets/sa.json"}}}}
            """)
        let config = try WorkerConfiguration.load(
            path: path, environment: ["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS": "k2:9092"])
        XCTAssertEqual(config.kafka.bootstrapServers, "k2:9092")
        XCTAssertEqual(config.kafka.properties["fetch.min.bytes"], "1")
        XCTAssertEqual(config.database.url, "postgresql://db/push")
        XCTAssertEqual(config.apps["shop"]?.fcm?.serviceAccountPath, "/secrets/sa.json")
        XCTAssertNil(config.apps["shop"]?.apns)
        XCTAssertEqual(config.worker.pollLinger, .milliseconds(5))
        // Batches of 512, two full ones in flight: the in-flight bound (what a killed
        // worker can have sent unrecorded) stays 1,024, as docs and the chaos test say.
        XCTAssertEqual(config.worker.batchSize, 512)
        XCTAssertEqual(config.worker.inFlightLimit, 1024)

        XCTAssertEqual(config.worker.maxDeliveriesInFlight, 20_000)
        XCTAssertEqual(config.worker.maxInFlightBytes, 32 << 20)

        let bounded = try write("""
            {"worker": {"max_deliveries_in_flight": 5000, "max_in_flight_bytes": 8388608},
             "apps": {"shop": {"fcm": {"service_account_path": "/x"}}}}
            """)
        let worker = try WorkerConfiguration.load(path: bounded, environment: [:]).worker
        XCTAssertEqual(worker.maxDeliveriesInFlight, 5_000)
        XCTAssertEqual(worker.maxInFlightBytes, 8 << 20)

        let lingerless = try write("""
            {"worker": {"poll_linger_ms": 0}, "apps": {"shop": {"fcm": {"service_account_path": "/x"}}}}
            """)
        XCTAssertEqual(try WorkerConfiguration.load(path: lingerless, environment: [:]).worker.pollLinger, .zero)
    }

    func testCertificateAuthNeedsNoSigningKey() throws {
        let path = try write("""
            {"apps": {"legacy": {"apns": {"topic": "com.example.legacy", "sandbox_base_url": "https://sandbox.test",
              "certificate": {"path": "/secrets/legacy.p12", "format": "p12", "passphrase_path": "/secrets/pass"}}}}}
            """)
        let apns = try XCTUnwrap(WorkerConfiguration.load(path: path, environment: [:]).apps["legacy"]?.apns)
        XCTAssertEqual(apns.certificate?.path, "/secrets/legacy.p12")
        XCTAssertEqual(apns.certificate?.format, "p12")
        XCTAssertEqual(apns.certificate?.passphrasePath, "/secrets/pass")
        XCTAssertEqual(apns.sandboxBaseURL, "https://sandbox.test")
        XCTAssertEqual(apns.keyPath, "")
    }

    func testErrorsNameTheKey() throws {
        let app = #""apps": {"a": {"fcm": {"service_account_path": "/x"}}}"#
        var e = try loadError(#"{"kafka": {"properties": {"linger.ms": 5}}, \#(app)}"#)
        XCTAssertEqual(e.key, "kafka.properties.linger.ms")
        XCTAssertEqual(e.problem, "must be a string")

        e = try loadError(#"{"worker": {"batch_size": 0}, \#(app)}"#)
        XCTAssertEqual(e.key, "worker.batch_size")

        e = try loadError(#"{"worker": {"poll_linger_ms": 1001}, \#(app)}"#)
        XCTAssertEqual(e.key, "worker.poll_linger_ms")
        XCTAssertEqual(e.problem, "must be 0...1000")

        e = try loadError(#"{"worker": {"max_deliveries_in_flight": 0}, \#(app)}"#)
        XCTAssertEqual(e.key, "worker.max_deliveries_in_flight")
        XCTAssertEqual(e.problem, "must be 1...10000000")

        e = try loadError(#"{"worker": {"max_in_flight_bytes": 1000}, \#(app)}"#)
        XCTAssertEqual(e.key, "worker.max_in_flight_bytes")

        e = try loadError(#"{"worker": {"max_in_flight_bytes": 1e300}, \#(app)}"#)
        XCTAssertEqual(e.key, "worker.max_in_flight_bytes")

        e = try loadError(#"{"apps": {}}"#)
        XCTAssertEqual(e.key, "apps")

        e = try loadError(#"{"apps": {"a": {}}}"#)
        XCTAssertEqual(e.key, "apps.a")

        e = try loadError(#"{"apps": {"a": {"fcm": {}}}}"#)
        XCTAssertEqual(e.key, "apps.a.fcm.service_account_path")
        XCTAssertEqual(e.problem, "is required")

        e = try loadError(#"{"apps": {"a": {"apns": {"topic": "a", "certificate": {"path": "/c.p12", "format": "der"}}}}}"#)
        XCTAssertEqual(e.key, "apps.a.apns.certificate.format")

        e = try loadError(#"{"apps": {"a": {"apns": {"topic": "a", "certificate": {}}}}}"#)
        XCTAssertEqual(e.key, "apps.a.apns.certificate.path")

        e = try loadError(#"{"apps": {"a": {"fcm": {"service_account_path": "/x", "rate_limit_per_second": 0}}}}"#)
        XCTAssertEqual(e.key, "apps.a.fcm.rate_limit_per_second")
        XCTAssertEqual(e.problem, "must be a positive integer")

        e = try loadError("{not json")
        XCTAssertEqual(e.key, "--config")
        XCTAssertTrue(e.problem.contains("not valid JSON"), e.problem)
        XCTAssertTrue(e.description.hasPrefix("configuration error at --config"), e.description)
    }

    /// The breaker's open time and its minimum requests per window reach the
    /// worker's retry settings (the demo's `--circuit-open-ms` and
    /// `--circuit-minimum-requests` write exactly these keys); zero is refused by name.
    func testCircuitBreakerSection() throws {
        let app = #""apps": {"a": {"fcm": {"service_account_path": "/x"}}}"#
        let path = try write(#"{"retry": {"circuit_breaker": {"open_ms": 1500, "minimum_requests": 4}}, \#(app)}"#)
        let retry = try WorkerConfiguration.load(path: path, environment: [:]).retry
        XCTAssertEqual(retry.circuitOpenDuration, .milliseconds(1500))
        XCTAssertEqual(retry.circuitMinimumRequests, 4)

        let defaults = try WorkerConfiguration.load(path: try write("{\(app)}"), environment: [:]).retry
        XCTAssertNil(defaults.circuitMinimumRequests, "unset: the breaker's own default")

        for key in ["open_ms", "minimum_requests"] {
            let e = try loadError(#"{"retry": {"circuit_breaker": {"\#(key)": 0}}, \#(app)}"#)
            XCTAssertEqual(e.key, "retry.circuit_breaker.\(key)")
            XCTAssertEqual(e.problem, "must be positive")
        }
    }

    func testWebPushAndPushKitSections() throws {
        let path = try write("""
            {"apps": {"site": {"webpush": {"vapid_private_key_path": "/s/vapid.pem", "subject": "mailto:ops@example.com"},
                               "hms": {"app_id": "106950123", "client_secret_path": "/s/hms"}},
                      "lab": {"webpush": {"vapid_private_key_path": "/s/v.pem", "subject": "https://example.com",
                                          "padding": 16, "allowed_hosts": ["Push.Example.NET"], "rate_limit_per_second": 50}}}}
            """)
        let config = try WorkerConfiguration.load(path: path, environment: [:])
        XCTAssertEqual(config.apps["site"]?.webpush?.subject, "mailto:ops@example.com")
        XCTAssertEqual(config.apps["site"]?.webpush?.allowedHosts, WebPushClientConfiguration.knownPushServiceHosts,
                       "by default only the browsers' push services")
        XCTAssertEqual(config.apps["site"]?.hms?.appID, "106950123")
        XCTAssertEqual(config.apps["site"]?.hms?.baseURL, "https://push-api.cloud.huawei.com")
        XCTAssertEqual(config.apps["lab"]?.webpush?.padding, 16)
        XCTAssertEqual(config.apps["lab"]?.webpush?.allowedHosts, ["push.example.net"])
        XCTAssertEqual(config.apps["lab"]?.webpush?.rateLimitPerSecond, 50)

        let bad: [(String, String)] = [
            (#"{"webpush": {"subject": "mailto:a@b"}}"#, "apps.x.webpush.vapid_private_key_path"),
            (#"{"webpush": {"vapid_private_key_path": "/k", "subject": "mailto:a@b", "padding": 5000}}"#, "apps.x.webpush.padding"),
            (#"{"webpush": {"vapid_private_key_path": "/k", "subject": "mailto:a@b", "allowed_hosts": []}}"#, "apps.x.webpush.allowed_hosts"),
            (#"{"webpush": {"vapid_private_key_path": "/k", "subject": "mailto:a@b", "allowed_hosts": ["https://x"]}}"#, "apps.x.webpush.allowed_hosts"),
            (#"{"webpush": {"vapid_private_key_path": "/k", "subject": "mailto:a@b", "allowed_hosts": [1]}}"#, "apps.x.webpush.allowed_hosts"),
            (#"{"hms": {"app_id": "abc", "client_secret_path": "/s"}}"#, "apps.x.hms.app_id"),
            (#"{"hms": {"app_id": "1"}}"#, "apps.x.hms.client_secret_path"),
        ]
        for (app, key) in bad {
            let e = try loadError(#"{"apps": {"x": \#(app)}}"#)
            XCTAssertEqual(e.key, key, app)
        }
    }

    func testAPushServiceHostMatchesItselfOrAParentDomainOnly() {
        let allowed = ["notify.windows.com", "fcm.googleapis.com"]
        XCTAssertTrue(WebPushClientConfiguration.admits(host: "fcm.googleapis.com", allowed: allowed))
        XCTAssertTrue(WebPushClientConfiguration.admits(host: "wns2-by3p.notify.windows.com", allowed: allowed))
        XCTAssertFalse(WebPushClientConfiguration.admits(host: "evilnotify.windows.com", allowed: allowed))
        XCTAssertFalse(WebPushClientConfiguration.admits(host: "fcm.googleapis.com.evil.example", allowed: allowed))
        XCTAssertFalse(WebPushClientConfiguration.admits(host: "10.0.0.1", allowed: allowed))
        XCTAssertEqual(try WebPushEndpoint("https://[::1]:8443/wp/x").host, "[::1]")
        XCTAssertEqual(try WebPushEndpoint("https://Push.Example.NET/wp/x").host, "push.example.net")
    }
}
