import Foundation
import XCTest
@testable import PushCore

/// What each provider is told for the same notification: what a
/// notification without an alert becomes (a data message everywhere,
/// whatever its image).
final class ProviderMappingTests: XCTestCase {
    static let createdAt = "2026-11-21T12:00:00Z"
    static let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop", hmsAppID: "104937261")
    static let huawei = #"{"token":"\#(SchemaCorpus.huaweiToken)","platform":"huawei"}"#
    static let web = SchemaCorpus.web()

    func decode(_ members: String, recipients: String) throws -> PushNotification {
        let json = #"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"com.example.shop","created_at":"\#(Self.createdAt)","recipients":\#(recipients)\#(members)}"#
        return try PushNotification.decode(Array(json.utf8), policy: Examples.policy).get()
    }

    /// Push Kit: data without an alert is a data message (`message.data`, no
    /// `notification` and no `android.notification`) even with an image,
    /// which shows only beside a title and a body, as on FCM.
    func testPushKitDataWithAnImageAndNoAlertIsADataMessage() throws {
        let n = try decode(#","image_url":"https://cdn.example.com/a.png","data":{"sync":"inbox"}"#, recipients: "[\(Self.huawei)]")
        let body = try JSONValue.parse(try n.request(for: n.recipients[0], context: Self.context).get().body)
        let message = try XCTUnwrap(body["message"])
        XCTAssertEqual(message["data"]?.stringValue, #"{"sync":"inbox"}"#)
        XCTAssertNil(message["notification"], "\(message)")
        XCTAssertNil(message["android"]?["notification"], "\(message)")
        // FCM does the same with the same notification.
        let fcm = try decode(#","image_url":"https://cdn.example.com/a.png","data":{"sync":"inbox"}"#,
                             recipients: #"[{"token":"\#(SchemaCorpus.androidToken)","platform":"android"}]"#)
        let fcmBody = try JSONValue.parse(try fcm.request(for: fcm.recipients[0], context: Self.context).get().body)
        XCTAssertNil(fcmBody["message"]?["notification"])

        // With a title and a body the image is shown beside them.
        let shown = try decode(#","image_url":"https://cdn.example.com/a.png","alert":{"title":"t","body":"b"}"#, recipients: "[\(Self.huawei)]")
        let shownBody = try JSONValue.parse(try shown.request(for: shown.recipients[0], context: Self.context).get().body)
        XCTAssertEqual(shownBody["message"]?["notification"]?["image"]?.stringValue, "https://cdn.example.com/a.png")
        XCTAssertEqual(shownBody["message"]?["notification"]?["title"]?.stringValue, "t")
    }

    /// Push Kit shows a notification only with both a title and a body: with
    /// one of them the delivery is rejected before it is sent, named.
    func testPushKitRefusesAnAlertWithOnlyATitleOrOnlyABody() throws {
        for alert in [#"{"title":"t"}"#, #"{"body":"b"}"#, #"{"title":"t","body":""}"#] {
            let n = try decode(#","alert":\#(alert)"#, recipients: "[\(Self.huawei)]")
            guard case .failure(let error) = n.request(for: n.recipients[0], context: Self.context) else {
                XCTFail("\(alert) was sent to Push Kit")
                continue
            }
            XCTAssertEqual(error.code, "IncompleteAlert", alert)
            XCTAssertFalse(error.tokenIsInvalid)
        }
    }

    /// A data-only notification gives the service worker its id and data and
    /// no text: no `"title": ""` for it to show.
    func testADataOnlyWebPayloadCarriesNoText() throws {
        for members in [#","data":{"sync":"inbox"}"#, #","alert":{"title":"","body":""},"data":{"sync":"inbox"}"#] {
            let n = try decode(members, recipients: "[\(Self.web)]")
            let request = try n.request(for: n.recipients[0], context: Self.context).get()
            let payload = try JSONValue.parse(request.body)
            XCTAssertEqual(payload.objectMembers?.map(\.key), ["id", "data"], String(decoding: request.body, as: UTF8.self))
            XCTAssertEqual(payload["data"]?["sync"]?.stringValue, "inbox")
        }
        // A body without a title keeps the body and has no title.
        let n = try decode(#","alert":{"body":"b"}"#, recipients: "[\(Self.web)]")
        let payload = try JSONValue.parse(try n.request(for: n.recipients[0], context: Self.context).get().body)
        XCTAssertNil(payload["title"])
        XCTAssertEqual(payload["body"]?.stringValue, "b")
    }
}
