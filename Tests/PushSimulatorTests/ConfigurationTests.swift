import Foundation
import Logging
import XCTest

@testable import PushSimulator

final class ConfigurationTests: XCTestCase {
    func testLoadsJSONFileWithDefaults() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let json = """
            {
              "port": 8443,
              "tls": {"generate": {}},
              "apnsKeys": [{"keyID": "K", "teamID": "T", "publicKeyPEM": "pem", "topics": ["com.example.app"]}],
              "deadTokens": {"\(deviceToken(3))": "2025-01-02T03:04:05Z"},
              "scenarios": [{"provider": "fcm", "fault": {"httpError": {"status": 503, "retryAfterSeconds": 5}},
                             "afterRequests": 10, "count": 3}]
            }
            """
        try json.write(to: file, atomically: true, encoding: .utf8)
        let configuration = try SimulatorConfiguration.load(fromJSONFile: file.path)
        XCTAssertEqual(configuration.host, "127.0.0.1")
        XCTAssertEqual(configuration.port, 8443)
        XCTAssertEqual(configuration.tls, .generate)
        XCTAssertEqual(configuration.apnsKeys.first?.topics, ["com.example.app"])
        XCTAssertEqual(configuration.deadTokens[deviceToken(3)], Date(timeIntervalSince1970: 1_735_787_045))
        XCTAssertEqual(
            configuration.scenarios,
            [.init(provider: "fcm", fault: .httpError(status: 503, retryAfterSeconds: 5), afterRequests: 10, count: 3)])
        XCTAssertFalse(configuration.fastMode)
        XCTAssertEqual(configuration.maxConcurrentStreams, 1000)
    }

    func testLoadErrorNamesTheKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"port": "eighty"}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try SimulatorConfiguration.load(fromJSONFile: file.path)) { error in
            XCTAssertTrue("\(error)".contains("port"), "\(error)")
        }
        try #"{"port": 70000}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try SimulatorConfiguration.load(fromJSONFile: file.path)) { error in
            XCTAssertTrue("\(error)".contains("port"), "\(error)")
        }
    }

    func testBadKeyPEMFailsAtStart() async throws {
        let configuration = SimulatorConfiguration(
            apnsKeys: [.init(keyID: "K", teamID: "T", publicKeyPEM: "not a pem")])
        let simulator = PushSimulator(configuration: configuration, logger: Logger(label: "test"))
        do {
            try await simulator.start()
            XCTFail("start should fail")
            try await simulator.shutdown()
        } catch let error as SimulatorError {
            XCTAssertEqual(error.kind, .invalidConfiguration)
            XCTAssertTrue(error.message.contains("apnsKeys[0].publicKeyPEM"), error.message)
        }
    }
}
