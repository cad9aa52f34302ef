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

    /// The oversized-answer fault loads from JSON and refuses sizes out of range, naming the field.
    func testOversizedAnswerFaultLoadsAndIsBounded() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"scenarios": [{"provider": "apns", "fault": {"oversizedAnswer": {"bodyBytes": 1048576, "headers": 20}}, "afterRequests": 0}]}"#
            .write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try SimulatorConfiguration.load(fromJSONFile: file.path).scenarios,
                       [.init(provider: "apns", fault: .oversizedAnswer(bodyBytes: 1_048_576, headers: 20))])
        for (bad, field) in [(#""bodyBytes": -1, "headers": 0"#, "bodyBytes"), (#""bodyBytes": 67108865, "headers": 0"#, "bodyBytes"),
                             (#""bodyBytes": 0, "headers": 10001"#, "headers")] {
            try #"{"scenarios": [{"fault": {"oversizedAnswer": {\#(bad)}}, "afterRequests": 0}]}"#.write(to: file, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try SimulatorConfiguration.load(fromJSONFile: file.path)) { error in
                XCTAssertTrue("\(error)".contains("fault.oversizedAnswer.\(field)"), "\(error)")
            }
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

    /// A key the format lacks, at any depth, is refused with its path; odd shapes are errors, not crashes.
    func testUnknownKeysAreRefusedWithTheirPath() throws {
        let cases: [(String, String)] = [
            (#"{"apnsKey": []}"#, "unknown key apnsKey"),
            (#"{"apnsKeys": [{"keyId": "K", "keyID": "K", "teamID": "T", "publicKeyPEM": "p"}]}"#, "unknown key apnsKeys[0].keyId"),
            (#"{"fcmAccounts": [{"clientEmail": "e", "privateKeyID": "k", "projectID": "p", "publicKeyPEM": "p", "type": "x"}]}"#,
             "unknown key fcmAccounts[0].type"),
            (#"{"hmsApps": [{"appId": "1", "clientSecret": "s", "secret": "s"}]}"#, "unknown key hmsApps[0].secret"),
            (#"{"tls": {"generate": {"hosts": ["a"]}}}"#, "unknown key tls.generate.hosts"),
            (#"{"scenarios": [{"provder": "fcm", "fault": {"delay": {"milliseconds": 5}}}]}"#, "unknown key scenarios[0].provder"),
            (#"{"scenarios": [{"fault": {"httpError": {"status": 503, "retryAfter": 1}}}]}"#,
             "unknown key scenarios[0].fault.httpError.retryAfter"),
            (#"{"scenarios": [{"fault": {"singleStreamAfterRejection": {"after": 1}}}]}"#,
             "unknown key scenarios[0].fault.singleStreamAfterRejection.after"),
        ]
        for (json, message) in cases {
            XCTAssertThrowsError(try load(json), json) { error in
                XCTAssertTrue("\(error)".contains(message), "\(json): \(error)")
            }
        }
        for json in [
            "[]", #""x""#, "{", #"{"tls": 5}"#, #"{"tls": {}}"#, #"{"tls": {"generate": {}, "files": {}}}"#,
            #"{"scenarios": [{"fault": null}]}"#, #"{"scenarios": [{"fault": {"goaway": 5}}]}"#,
            #"{"scenarios": [{"fault": {"delay": {"milliseconds": 1}, "goaway": {"afterStreams": 1}}}]}"#,
            #"{"deadTokens": {"t": "yesterday"}}"#,
        ] {
            XCTAssertThrowsError(try load(json), json)
        }
        XCTAssertEqual(try load(#"{"tls": null, "apnsEnvironment": null}"#).tls, .generate)
    }

    private func load(_ json: String) throws -> SimulatorConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sim-config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try json.write(to: file, atomically: true, encoding: .utf8)
        return try SimulatorConfiguration.load(fromJSONFile: file.path)
    }
}
