import Logging
import PushCore
import XCTest

@testable import PushWorker

/// `observability` / `logging` configuration: defaults, file, environment, errors naming the key.
final class ObservabilityConfigurationTests: XCTestCase {
    private func parse(_ json: String?, env: [String: String] = [:]) throws -> ObservabilityConfiguration {
        try ObservabilityConfiguration.parse(json.map { try JSONValue.parse(Array($0.utf8)) }, environment: env)
    }

    private func assertError(_ json: String?, env: [String: String] = [:], key: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(json, env: env), file: file, line: line) { error in
            XCTAssertEqual((error as? ConfigurationError)?.key, key, "\(error)", file: file, line: line)
        }
    }

    func testDefaults() throws {
        let config = try parse(nil)
        XCTAssertEqual(config.listenHost, "0.0.0.0")
        XCTAssertEqual(config.listenPort, 9464)
        XCTAssertEqual(config.logFormat, .json)
        XCTAssertEqual(config.logLevel, .info)
        XCTAssertEqual(config.livenessWindow, .seconds(30))
        XCTAssertEqual(try parse("{}"), config)
    }

    func testFileValues() throws {
        let config = try parse(#"""
            {"observability": {"listen": "127.0.0.1:9100", "liveness_window_seconds": 45},
             "logging": {"format": "text", "level": "DEBUG"}}
            """#)
        XCTAssertEqual(config.listenHost, "127.0.0.1")
        XCTAssertEqual(config.listenPort, 9100)
        XCTAssertEqual(config.logFormat, .text)
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.livenessWindow, .seconds(45))
    }

    func testListenForms() throws {
        XCTAssertTrue(try ObservabilityConfiguration.parseListen("[::1]:0", key: "k") == ("::1", 0))
        XCTAssertTrue(try ObservabilityConfiguration.parseListen(":9000", key: "k") == ("0.0.0.0", 9000))
        XCTAssertTrue(try ObservabilityConfiguration.parseListen("metrics.local:80", key: "k") == ("metrics.local", 80))
    }

    func testEnvironmentWins() throws {
        let config = try parse(#"{"observability": {"listen": "127.0.0.1:9100"}, "logging": {"format": "text", "level": "debug"}}"#,
                               env: ["PUSHFLEET_OBSERVABILITY_LISTEN": "0.0.0.0:0", "PUSHFLEET_LOG_FORMAT": "json",
                                     "PUSHFLEET_LOG_LEVEL": "warning"])
        XCTAssertEqual(config.listenHost, "0.0.0.0")
        XCTAssertEqual(config.listenPort, 0)
        XCTAssertEqual(config.logFormat, .json)
        XCTAssertEqual(config.logLevel, .warning)
    }

    func testErrorsNameTheKey() {
        assertError(#"{"observability": "9464"}"#, key: "observability")
        assertError(#"{"observability": {"listen": 9464}}"#, key: "observability.listen")
        assertError(#"{"observability": {"listen": "localhost"}}"#, key: "observability.listen")
        assertError(#"{"observability": {"listen": "0.0.0.0:70000"}}"#, key: "observability.listen")
        assertError(#"{"observability": {"listen": "::1:9464"}}"#, key: "observability.listen")
        assertError(#"{"observability": {"liveness_window_seconds": 0}}"#, key: "observability.liveness_window_seconds")
        assertError(#"{"logging": {"format": "xml"}}"#, key: "logging.format")
        assertError(#"{"logging": {"level": "loud"}}"#, key: "logging.level")
        assertError(#"{"logging": []}"#, key: "logging")
        assertError(nil, env: ["PUSHFLEET_LOG_LEVEL": "verbose"], key: "PUSHFLEET_LOG_LEVEL")
        assertError(nil, env: ["PUSHFLEET_LOG_FORMAT": "yaml"], key: "PUSHFLEET_LOG_FORMAT")
        assertError(nil, env: ["PUSHFLEET_OBSERVABILITY_LISTEN": "all"], key: "PUSHFLEET_OBSERVABILITY_LISTEN")
    }

    func testLogHandlerFollowsTheFormat() {
        var config = ObservabilityConfiguration()
        config.logLevel = .error
        XCTAssertTrue(config.makeLogHandler(label: "x") is JSONLogHandler)
        XCTAssertEqual(config.makeLogHandler(label: "x").logLevel, .error)
        config.logFormat = .text
        XCTAssertTrue(config.makeLogHandler(label: "x") is StreamLogHandler)
        XCTAssertEqual(config.makeLogHandler(label: "x").logLevel, .error)
    }
}
