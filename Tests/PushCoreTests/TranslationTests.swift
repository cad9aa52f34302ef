import Foundation
import XCTest
@testable import PushCore

final class TranslationTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop")
    let iosToken = "8a3f0c2b9d1e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c"
    let fcmToken = "fcm-token_AbCdEf0123456789:APA91bHx-example"

    func example(_ name: String) throws -> PushNotification {
        try PushNotification.decode(Examples.bytes(Examples.schemasDirectory.appendingPathComponent("examples/valid/\(name)")), policy: Examples.policy).get()
    }

    func testAPNsAlertExactRequest() throws {
        let n = try example("ios-alert.json")
        let request = try n.request(for: n.recipients[0], context: context).get()
        XCTAssertEqual(request.provider, .apns)
        XCTAssertEqual(request.path, "/3/device/\(iosToken)")
        XCTAssertEqual(request.headers.map(\.name), ["apns-push-type", "apns-topic", "apns-priority", "apns-id", "apns-expiration", "apns-collapse-id"])
        XCTAssertEqual(request.header("apns-push-type"), "alert")
        XCTAssertEqual(request.header("apns-topic"), "com.example.shop")
        XCTAssertEqual(request.header("apns-priority"), "10")
        XCTAssertEqual(request.header("apns-collapse-id"), "order-1234")
        XCTAssertEqual(request.header("apns-id"), DeliveryIdentity.apnsID(notificationID: n.id, token: iosToken))
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            #"{"aps":{"alert":{"title":"Your order shipped","body":"Order #1234 is on its way."},"badge":1,"sound":"default"},"order_id":"1234","deeplink":"shop://orders/1234"}"#)
    }

    func testAPNsSilentIsBackgroundPriorityFiveWithExpiration() throws {
        var n = try example("silent.json")
        n.recipients = [Recipient(token: iosToken, platform: .ios)]
        let request = try n.request(for: n.recipients[0], context: context).get()
        XCTAssertEqual(request.header("apns-push-type"), "background")
        XCTAssertEqual(request.header("apns-priority"), "5")
        XCTAssertEqual(request.header("apns-expiration"), String(Int(n.expiresAt!.timeIntervalSince1970)))
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), #"{"aps":{"content-available":1},"sync":"inbox"}"#)
    }

    func testAPNsIDIsStableLowercaseUUIDv8AndDistinctPerDevice() {
        let id = UUID()
        let a = DeliveryIdentity.apnsID(notificationID: id, token: "aa")
        XCTAssertEqual(a, DeliveryIdentity.apnsID(notificationID: id, token: "aa"))
        XCTAssertNotEqual(a, DeliveryIdentity.apnsID(notificationID: id, token: "ab"))
        XCTAssertEqual(a, a.lowercased())
        XCTAssertNotNil(UUID(uuidString: a))
        XCTAssertEqual(Array(a)[14], "8")
    }

    func testAPNsRejectsMalformedTokenAsInvalidToken() throws {
        var n = try example("ios-alert.json")
        n.recipients = [Recipient(token: "not-hex-token", platform: .ios)]
        guard case .failure(let error) = n.request(for: n.recipients[0], context: context) else { return XCTFail("translated") }
        XCTAssertEqual(error.code, "BadDeviceToken")
        XCTAssertTrue(error.tokenIsInvalid)
    }

    func testAPNsPayloadLimitIsMeasuredOnTheExactBody() throws {
        var n = try example("ios-alert.json")
        n.data = []
        n.alert = .init(title: nil, body: "x")
        let overhead = try n.request(for: n.recipients[0], context: context).get().body.count - 1
        n.alert = .init(title: nil, body: String(repeating: "x", count: APNsTranslator.maxPayloadBytes - overhead))
        XCTAssertEqual(try n.request(for: n.recipients[0], context: context).get().body.count, APNsTranslator.maxPayloadBytes)
        n.alert = .init(title: nil, body: String(repeating: "x", count: APNsTranslator.maxPayloadBytes - overhead + 1))
        guard case .failure(let error) = n.request(for: n.recipients[0], context: context) else { return XCTFail("translated") }
        XCTAssertEqual(error.code, "PayloadTooLarge")
    }

    func testFCMExactRequest() throws {
        let n = try example("mixed-platforms.json")
        let request = try n.request(for: n.recipients[1], context: context).get()
        XCTAssertEqual(request.provider, .fcm)
        XCTAssertEqual(request.path, "/v1/projects/example-shop/messages:send")
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            #"{"message":{"token":"fcm-token_AbCdEf0123456789:APA91bHx-example","notification":{"title":"Flash sale","body":"20% off for the next hour"},"data":{"campaign":"flash-2026-11","discount":"20","tags":"[\"sale\",\"hour\"]"},"android":{"priority":"NORMAL","ttl":"3600s"}}}"#)
    }

    func testFCMRejectsReservedDataKeys() throws {
        var n = try example("mixed-platforms.json")
        for key in ["from", "message_type", "google.x", "gcm.n.e"] {
            n.data = [(key, .string("v"))]
            guard case .failure(let error) = n.request(for: n.recipients[1], context: context) else { return XCTFail(key) }
            XCTAssertEqual(error.code, "ReservedKey")
        }
    }

    func testFCMMalformedTokenAndMissingProject() throws {
        let n = try example("mixed-platforms.json")
        guard case .failure(let e1) = n.request(for: Recipient(token: "bad token!", platform: .android), context: context) else { return XCTFail() }
        XCTAssertTrue(e1.tokenIsInvalid)
        guard case .failure(let e2) = n.request(for: n.recipients[1], context: .init(apnsTopic: nil, fcmProjectID: nil)) else { return XCTFail() }
        XCTAssertEqual(e2.code, "MissingProject")
        XCTAssertFalse(e2.tokenIsInvalid)
    }

    func testExpiry() throws {
        let n = try example("mixed-platforms.json")
        XCTAssertFalse(n.isExpired(at: n.createdAt))
        XCTAssertTrue(n.isExpired(at: n.createdAt.addingTimeInterval(3600)))
    }
}
