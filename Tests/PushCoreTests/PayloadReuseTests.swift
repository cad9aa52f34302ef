import Foundation
import XCTest
@testable import PushCore

/// Decode keeps the APNs payload it rendered to check Apple's size limit, and
/// translation sends those bytes instead of rendering them again: the body is
/// the same either way, a field changed after decode gets a fresh body, and
/// the kept bytes change nothing anyone can observe.
final class PayloadReuseTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop")

    func testEveryExampleSendsTheSameRequestWithAndWithoutTheKeptPayload() throws {
        var compared = 0
        for file in try Examples.files("valid") {
            let name = file.lastPathComponent
            let n = try PushNotification.decode(Examples.bytes(file), policy: Examples.policy).get()
            let ios = n.recipients.filter { $0.platform == .ios }
            guard !ios.isEmpty else {
                XCTAssertNil(n.apnsPayload, "\(name): no iOS recipient, nothing measured")
                continue
            }
            XCTAssertEqual(n.apnsPayload, APNsTranslator.payload(for: n), name)
            var rendered = n
            rendered.apnsPayload = nil
            for recipient in ios {
                XCTAssertEqual(
                    n.request(for: recipient, context: context), rendered.request(for: recipient, context: context),
                    "\(name) \(recipient.token)")
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 10)  // the iOS recipients of the valid examples
    }

    func testAFieldChangedAfterDecodeGetsAFreshBody() throws {
        let decoded = try PushNotification.decode(Examples.bytes(
            Examples.schemasDirectory.appendingPathComponent("examples/valid/ios-alert.json")), policy: Examples.policy).get()
        let recipient = decoded.recipients[0]
        func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
        let original = text(try decoded.request(for: recipient, context: context).get().body)
        let changes: [(String, (inout PushNotification) -> Void)] = [
            ("alert", { $0.alert = .init(title: "Changed", body: "Changed") }),
            ("alert.body", { $0.alert?.body = "Changed" }),
            ("badge", { $0.badge = 7 }),
            ("sound", { $0.sound = "chime.caf" }),
            ("data", { $0.data = [("order_id", .string("9999"))] }),
            ("data.append", { $0.data.append(("extra", .int(1))) }),
            ("category", { $0.category = "ORDER" }),
            ("threadID", { $0.threadID = "orders" }),
            ("contentAvailable", { $0.contentAvailable = true }),
            ("mutableContent", { $0.mutableContent = true }),
            ("interruptionLevel", { $0.interruptionLevel = .timeSensitive }),
            ("relevanceScore", { $0.relevanceScore = 0.5 }),
            ("targetContentID", { $0.targetContentID = "order-1234" }),
            ("apns.pushType", { $0.apns.pushType = .widgets }),
            ("apns.aps", { $0.apns.aps = [("filter-criteria", .string("work"))] }),
        ]
        for (field, change) in changes {
            var n = decoded
            XCTAssertNotNil(n.apnsPayload, field)
            change(&n)
            XCTAssertNil(n.apnsPayload, "\(field): the kept payload is dropped")
            let body = text(try n.request(for: recipient, context: context).get().body)
            XCTAssertEqual(body, text(APNsTranslator.payload(for: n)), field)
            XCTAssertNotEqual(body, original, "\(field) changes the payload")
        }
        // Any change drops it, even to a field the payload does not read.
        var moved = decoded
        moved.recipients.append(Recipient(token: String(repeating: "cd", count: 32), platform: .ios))
        XCTAssertNil(moved.apnsPayload)
        XCTAssertEqual(text(try moved.request(for: recipient, context: context).get().body), original)
    }

    func testTheKeptPayloadIsInvisibleToEqualityAndEncoding() throws {
        for file in try Examples.files("valid") {
            let n = try PushNotification.decode(Examples.bytes(file), policy: Examples.policy).get()
            var bare = n
            bare.apnsPayload = nil
            XCTAssertEqual(n, bare, file.lastPathComponent)
            XCTAssertEqual(n.intakeJSON().encoded(), bare.intakeJSON().encoded(), file.lastPathComponent)
            XCTAssertEqual(try PushNotification.decode(n.intakeJSON(), policy: Examples.policy).get(), n, file.lastPathComponent)
        }
    }

    func testTheSizeLimitStillRejectsWithTheSameMessage() throws {
        let token = String(repeating: "ab", count: 32)
        func intake(pushType: APNsPushType?, payloadBytes: Int) -> JSONValue {
            var n = PushNotification(id: UUID(), app: "a", createdAt: Date(timeIntervalSince1970: 1_795_262_400),
                                     recipients: [Recipient(token: token, platform: .ios)], alert: .init(body: "x"))
            n.apns.pushType = pushType
            let overhead = APNsTranslator.payload(for: n).count - 1
            n.alert = .init(body: String(repeating: "x", count: payloadBytes - overhead))
            return n.intakeJSON()
        }
        for (type, limit) in [(nil, 4096), (APNsPushType.voip, 5120)] {
            let fits = try PushNotification.decode(intake(pushType: type, payloadBytes: limit), policy: Examples.policy).get()
            XCTAssertEqual(fits.apnsPayload?.count, limit)
            let topic = type == .voip ? "com.example.shop.voip" : "com.example.shop"
            let request = try fits.request(for: fits.recipients[0], context: .init(apnsTopic: topic, fcmProjectID: nil)).get()
            XCTAssertEqual(request.body, APNsTranslator.payload(for: fits))
            guard case .failure(let error) = PushNotification.decode(intake(pushType: type, payloadBytes: limit + 1), policy: Examples.policy) else {
                return XCTFail("\(limit + 1) bytes decoded")
            }
            XCTAssertEqual(error.issues, [ValidationIssue(
                path: "$", reason: "APNs payload is \(limit + 1) bytes after translation, over Apple's \(limit)-byte limit",
                code: .payloadTooLarge)])
        }
        // The rejected examples, word for word as before the payload was kept.
        for (name, reason) in [
            ("apns-payload-too-large.json", "APNs payload is 4141 bytes after translation, over Apple's 4096-byte limit"),
            ("voip-payload-too-large.json", "APNs payload is 5140 bytes after translation, over Apple's 5120-byte limit"),
        ] {
            let url = Examples.schemasDirectory.appendingPathComponent("examples/rejected/\(name)")
            guard case .failure(let error) = PushNotification.decode(try Examples.bytes(url), policy: Examples.policy) else { return XCTFail(name) }
            XCTAssertEqual(error.kind, .invalid, name)
            XCTAssertEqual(error.issues, [ValidationIssue(path: "$", reason: reason, code: .payloadTooLarge)], name)
        }
    }
}
