import Foundation
import XCTest
@testable import PushCore

/// The cheap paths of decode and translation give exactly what the general
/// ones give: the UUID parser agrees with Foundation, and the APNs payload
/// written straight out equals the one built as a tree.
final class DecodeFastPathTests: XCTestCase {
    func testUUIDParserAgreesWithFoundation() {
        let canonical = "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f"
        var cases = [
            canonical, canonical.uppercased(), "4F1c6f0E-8a5b-4C3d-9e2f-0A1b2c3d4e5f", "00000000-0000-0000-0000-000000000000",
            "", "x", String(canonical.dropLast()), canonical + "0", canonical.replacingOccurrences(of: "-", with: ""),
            " " + String(canonical.dropFirst()), "+f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5g",
            "4f1c6f0e_8a5b-4c3d-9e2f-0a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f0-a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5\u{0}",
            "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4é", "{4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f}", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e 5",
        ]
        // Every single-byte change of the canonical form, at every position.
        let replacements: [Character] = ["-", "0", "a", "F", "g", " ", "+", "x"]
        for i in 0..<canonical.count {
            for r in replacements {
                var chars = Array(canonical)
                chars[i] = r
                cases.append(String(chars))
            }
        }
        for text in cases {
            XCTAssertEqual(FieldReader.parseUUID(text), UUID(uuidString: text), "\"\(text)\"")
        }
    }

    func testDirectAPNsPayloadEqualsTheMergedTree() throws {
        var notifications: [PushNotification] = []
        for url in try Examples.files("valid") + Examples.files("golden") {
            if case .success(let n) = PushNotification.decode(try Examples.bytes(url), policy: Examples.policy) { notifications.append(n) }
        }
        XCTAssertFalse(notifications.isEmpty)
        let base = notifications[0]
        var variants: [PushNotification] = []
        for type in APNsPushType.allCases {
            var n = base
            n.apns.pushType = type
            variants.append(n)
            n.alert = nil
            n.badge = nil
            n.sound = nil
            variants.append(n)
            n.data = [("mdm", .string("magic")), ("n", .double(1.5)), ("q", .string("a\"b\n"))]
            variants.append(n)
            n.data = []
            variants.append(n)
        }
        var full = base
        full.alert = PushNotification.Alert(
            title: "T\u{1}", body: "B", subtitle: "S", titleLocKey: "tk", titleLocArgs: ["a", "b"], subtitleLocKey: "sk",
            subtitleLocArgs: [], bodyLocKey: "bk", bodyLocArgs: ["c"], launchImage: "L.png")
        full.sound = PushNotification.Sound(name: "ping", critical: true, volume: 0.25)
        full.threadID = "thread"
        full.category = "cat"
        full.contentAvailable = true
        full.mutableContent = true
        full.targetContentID = "target"
        full.interruptionLevel = .timeSensitive
        full.relevanceScore = 0.75
        full.data = [("k", .object([("a", .array([.int(1), .null, .bool(false)]))]))]
        variants.append(full)
        for n in notifications + variants where n.apns.aps.isEmpty {
            let type = APNsTranslator.pushType(for: n)
            let aps = APNsTranslator.apsMembers(for: n, type: type)
            var tree: [(key: String, value: JSONValue)] = []
            if !(aps.isEmpty && type == .mdm) { tree.append(("aps", .object(aps))) }
            tree += n.data
            XCTAssertEqual(
                String(decoding: APNsTranslator.payload(for: n), as: UTF8.self),
                String(decoding: JSONValue.object(tree).encoded(), as: UTF8.self))
        }
    }
}
