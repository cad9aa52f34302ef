import Foundation
import XCTest
@testable import PushCore

final class HMSTranslatorTests: XCTestCase {
    func text(_ message: HMSTranslator.Message) throws -> String {
        String(decoding: try HMSTranslator.body(for: message), as: UTF8.self)
    }

    func testNotificationBodyHasHuaweisShape() throws {
        let message = HMSTranslator.Message(
            token: "tok1", title: "Hi", body: "Hello \"you\"", image: "https://example.com/a.png",
            data: [("order", "42"), ("kind", "shipped")], collapseKey: "7", urgency: .high, ttlSeconds: 3600,
            category: "IM", biTag: "campaign-1", clickAction: .url("https://example.com/o/42"))
        XCTAssertEqual(
            try text(message),
            #"{"validate_only":false,"message":{"data":"{\"order\":\"42\",\"kind\":\"shipped\"}","#
                + #""notification":{"title":"Hi","body":"Hello \"you\"","image":"https://example.com/a.png"},"#
                + #""android":{"collapse_key":7,"urgency":"HIGH","category":"IM","ttl":"3600s","bi_tag":"campaign-1","#
                + #""notification":{"click_action":{"type":2,"url":"https://example.com/o/42"}}},"token":["tok1"]}}"#)
    }

    func testDataMessageHasNoNotification() throws {
        let body = try text(HMSTranslator.Message(token: "t", data: [("k", "v")]))
        XCTAssertEqual(body, #"{"validate_only":false,"message":{"data":"{\"k\":\"v\"}","android":{"urgency":"NORMAL"},"token":["t"]}}"#)
        // The data string decodes back to the map.
        let parsed = try JSONValue.parse(Array(body.utf8))
        let data = try XCTUnwrap(parsed["message"]?["data"]?.stringValue)
        XCTAssertEqual(try JSONValue.parse(Array(data.utf8))["k"], .string("v"))
    }

    func testClickActions() throws {
        XCTAssertTrue(try text(.init(token: "t", title: "x", body: "y")).contains(#""click_action":{"type":3}"#))
        XCTAssertTrue(try text(.init(token: "t", title: "x", body: "y", clickAction: .intent("intent://a"))).contains(#"{"type":1,"intent":"intent://a"}"#))
        XCTAssertTrue(try text(.init(token: "t", title: "x", body: "y", clickAction: .action("OPEN"))).contains(#"{"type":1,"action":"OPEN"}"#))
        for bad: HMSTranslator.ClickAction in [.url("http://x.example"), .url("https://"), .intent(""), .action("")] {
            XCTAssertThrowsError(try HMSTranslator.body(for: .init(token: "t", title: "x", body: "y", clickAction: bad))) {
                XCTAssertEqual($0 as? HMSTranslator.Failure, .invalidClickAction)
            }
        }
    }

    func testCollapseKeyMapping() {
        XCTAssertEqual(HMSTranslator.collapseKey(for: "-1"), -1)
        XCTAssertEqual(HMSTranslator.collapseKey(for: "0"), 0)
        XCTAssertEqual(HMSTranslator.collapseKey(for: "100"), 100)
        // Stable: FNV-1a("") = 0x811C9DC5 = 2166136261 → 61 + 1.
        XCTAssertEqual(HMSTranslator.collapseKey(for: "101"), HMSTranslator.collapseKey(for: "101"))
        XCTAssertEqual(HMSTranslator.collapseKey(for: "a"), Int(UInt32(0xE40C292C) % 100) + 1)
        for key in ["order-updates", "101", "-2", "ünïcödé", String(repeating: "x", count: 10_000)] {
            XCTAssertTrue((1...100).contains(HMSTranslator.collapseKey(for: key)), key)
        }
    }

    func testTTLIsClampedAndNegativeRefused() throws {
        // Push Kit gives a zero TTL no meaning: now or never is its shortest cache, one second.
        XCTAssertTrue(try text(.init(token: "t", ttlSeconds: 0)).contains(#""ttl":"1s""#))
        XCTAssertTrue(try text(.init(token: "t", ttlSeconds: 28 * 86_400)).contains(#""ttl":"1296000s""#))
        XCTAssertTrue(try text(.init(token: "t", ttlSeconds: .max)).contains(#""ttl":"1296000s""#))
        XCTAssertThrowsError(try HMSTranslator.body(for: .init(token: "t", ttlSeconds: -1))) {
            XCTAssertEqual($0 as? HMSTranslator.Failure, .negativeTTL)
        }
    }

    func testSizeRuleExcludesTheToken() throws {
        // 4096 bytes of message without the token passes whatever the token's length.
        func message(bodyLength: Int, token: String) -> HMSTranslator.Message {
            .init(token: token, title: "t", body: String(repeating: "b", count: bodyLength))
        }
        // `{"notification":{"title":"t","body":"…"},"android":{"urgency":"NORMAL","notification":{"click_action":{"type":3}}}}`
        let fixed = #"{"notification":{"title":"t","body":""},"android":{"urgency":"NORMAL","notification":{"click_action":{"type":3}}}}"#.utf8.count
        let fits = 4096 - fixed
        XCTAssertNoThrow(try HMSTranslator.body(for: message(bodyLength: fits, token: String(repeating: "T", count: 5000))))
        XCTAssertThrowsError(try HMSTranslator.body(for: message(bodyLength: fits + 1, token: "t"))) {
            XCTAssertEqual($0 as? HMSTranslator.Failure, .tooLarge(bytes: 4097))
        }
        XCTAssertThrowsError(try HMSTranslator.body(for: .init(token: ""))) {
            XCTAssertEqual($0 as? HMSTranslator.Failure, .emptyToken)
        }
    }

    func testAppIDsAndPath() {
        XCTAssertTrue(HMSTranslator.isValidAppID("104000001"))
        for bad in ["", "projects", "12a", String(repeating: "1", count: 65), "1/2"] {
            XCTAssertFalse(HMSTranslator.isValidAppID(bad), bad)
        }
        XCTAssertEqual(HMSTranslator.path(appID: "104000001"), "/v1/104000001/messages:send")
    }
}
