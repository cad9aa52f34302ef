import Foundation
import XCTest
@testable import PushCore

final class IntakeTests: XCTestCase {
    func testEveryValidExampleDecodes() throws {
        let files = try Examples.files("valid")
        XCTAssertGreaterThanOrEqual(files.count, 13)
        for file in files {
            switch PushNotification.decode(try Examples.bytes(file), policy: Examples.policy) {
            case .success(let n):
                XCTAssertFalse(n.recipients.isEmpty && n.userRecipients.isEmpty && n.fcmTargets.isEmpty, file.lastPathComponent)
            case .failure(let error):
                XCTFail("\(file.lastPathComponent): \(error)")
            }
        }
    }

    func testEveryInvalidExampleFailsWhereExpected() throws {
        try checkFailures(in: "invalid", atLeast: 19)
    }

    /// Examples that pass the JSON Schema but break a rule across fields or a
    /// provider payload limit after translation.
    func testEveryRejectedExampleFailsWhereExpected() throws {
        try checkFailures(in: "rejected", atLeast: 10)
    }

    func checkFailures(in directory: String, atLeast minimum: Int) throws {
        let expectedURL = Examples.schemasDirectory.appendingPathComponent("examples/\(directory)/expected.json")
        let expected = try JSONValue.parse(Array(Data(contentsOf: expectedURL)))
        let files = try Examples.files(directory)
        XCTAssertGreaterThanOrEqual(files.count, minimum)
        XCTAssertEqual(expected.objectMembers?.count, files.count, "expected.json and the files differ")
        for file in files {
            let name = file.lastPathComponent
            guard let want = expected[name] else { XCTFail("\(name) has no entry in expected.json"); continue }
            switch PushNotification.decode(try Examples.bytes(file), policy: Examples.policy) {
            case .success: XCTFail("\(name) decoded but should not")
            case .failure(let error):
                XCTAssertEqual(error.kind.rawValue, want["kind"]?.stringValue, name)
                XCTAssertTrue(error.issues.contains { $0.path == want["path"]?.stringValue }, "\(name): \(error)")
            }
        }
    }

    func testDecodesAllFields() throws {
        let url = Examples.schemasDirectory.appendingPathComponent("examples/valid/mixed-platforms.json")
        let n = try PushNotification.decode(Examples.bytes(url), policy: Examples.policy).get()
        XCTAssertEqual(n.id, UUID(uuidString: "0b8e9d2a-7c41-4f0e-a5b6-3c2d1e0f9a8b"))
        XCTAssertEqual(n.app, "com.example.shop")
        XCTAssertEqual(n.priority, .normal)
        XCTAssertEqual(n.createdAt.timeIntervalSince1970, 1_795_262_400.25, accuracy: 0.001)
        XCTAssertEqual(n.expiresAt?.timeIntervalSince(n.createdAt), 3600)
        XCTAssertEqual(n.recipients.map(\.platform), [.ios, .android])
        XCTAssertEqual(n.alert, PushNotification.Alert(title: "Flash sale", body: "20% off for the next hour"))
        XCTAssertEqual(n.data.map(\.key), ["campaign", "discount", "tags"])
    }

    func testDecodesEveryRichField() throws {
        let url = Examples.schemasDirectory.appendingPathComponent("examples/valid/ios-rich-alert.json")
        let n = try PushNotification.decode(Examples.bytes(url), policy: Examples.policy).get()
        XCTAssertEqual(n.alert, PushNotification.Alert(title: "Anna", body: "Lunch at 1?", subtitle: "Team chat", launchImage: "Launch.png"))
        XCTAssertEqual(n.sound, PushNotification.Sound(name: "alarm.caf", critical: true, volume: 0.8))
        XCTAssertEqual(n.category, "MESSAGE")
        XCTAssertEqual(n.threadID, "chat-42")
        XCTAssertTrue(n.mutableContent)
        XCTAssertEqual(n.interruptionLevel, .timeSensitive)
        XCTAssertEqual(n.relevanceScore, 0.75)
        XCTAssertEqual(n.targetContentID, "chat/42")
        let android = try PushNotification.decode(Examples.bytes(Examples.schemasDirectory.appendingPathComponent("examples/valid/android-rich.json")), policy: Examples.policy).get()
        XCTAssertEqual(android.imageURL, "https://cdn.example.com/sale.png")
        XCTAssertEqual(android.fcm.android.map(\.key), ["restricted_package_name", "notification", "fcm_options"])
        XCTAssertEqual(android.expiresAt?.timeIntervalSince(android.createdAt), 86400)
        let mdm = try PushNotification.decode(Examples.bytes(Examples.schemasDirectory.appendingPathComponent("examples/valid/mdm.json")), policy: Examples.policy).get()
        XCTAssertEqual(mdm.apns.pushType, .mdm)
        XCTAssertEqual(mdm.apns.topic, "com.apple.mgmt.External.3b5f1a2e-9c4d-4e6f-8a7b-0c1d2e3f4a5b")
    }

    func testOffsetTimestampsParse() throws {
        let url = Examples.schemasDirectory.appendingPathComponent("examples/valid/silent.json")
        let n = try PushNotification.decode(Examples.bytes(url), policy: Examples.policy).get()
        XCTAssertEqual(n.createdAt, Timestamps.parse("2026-11-21T11:00:00Z"))
        XCTAssertEqual(n.expiresAt, Timestamps.parse("2026-11-21T12:00:00Z"))
    }

    func testEveryProblemIsReportedAtOnceWithItsPath() {
        let json = #"{"schema_version":1,"id":"x","app":"","created_at":"yesterday","priority":"urgent","recipients":[{"token":"","platform":"ios"}],"colour":"red"}"#
        guard case .failure(let error) = PushNotification.decode(Array(json.utf8), policy: Examples.policy) else { return XCTFail("decoded") }
        let paths = Set(error.issues.map(\.path))
        XCTAssertEqual(error.kind, .invalid)
        for path in ["id", "app", "created_at", "priority", "recipients[0].token", "colour", "alert"] {
            XCTAssertTrue(paths.contains(path), "missing issue for \(path): \(error)")
        }
    }

    func testKnownIDAndAppAreKeptOnFailure() {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[]}"#
        guard case .failure(let error) = PushNotification.decode(Array(json.utf8), policy: Examples.policy) else { return XCTFail("decoded") }
        XCTAssertEqual(error.notificationID, UUID(uuidString: "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10"))
        XCTAssertEqual(error.app, "a")
    }

    func testHostileInputGetsAnErrorNotACrash() {
        let inputs: [String] = ["", "null", "[]", "\"x\"", "{", String(repeating: "[", count: 10_000),
                                "{\"a\":1,\"a\":2}", "{\"schema_version\":1e400}", "{\"x\":\"\\ud800\"}"]
        for input in inputs {
            guard case .failure(let error) = PushNotification.decode(Array(input.utf8), policy: Examples.policy) else {
                XCTFail("\(input.prefix(20)) decoded"); continue
            }
            XCTAssertFalse(error.issues.isEmpty)
        }
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: IntakeLimits.maxMessageBytes + 1)
        guard case .failure(let error) = PushNotification.decode(huge, policy: Examples.policy) else { return XCTFail("decoded") }
        XCTAssertTrue(error.issues[0].reason.contains("intake limit"))
    }

    func testDuplicateRecipientsAreSentOnce() {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","alert":{"body":"b"},"recipients":[{"token":"t1234567890123456789012","platform":"android"},{"token":"t1234567890123456789012","platform":"android"}]}"#
        XCTAssertEqual(try PushNotification.decode(Array(json.utf8), policy: Examples.policy).get().recipients.count, 1)
    }
}

final class IntakeRoundTripTests: XCTestCase {
    func testIntakeJSONDecodesToTheSameNotification() throws {
        for file in try Examples.files("valid") {
            let n = try PushNotification.decode(Examples.bytes(file), policy: Examples.policy).get()
            let again = try PushNotification.decode(n.intakeJSON().encoded(), policy: Examples.policy).get()
            XCTAssertEqual(again, n, file.lastPathComponent)
        }
    }
}
