import Foundation
import XCTest
@testable import PushCore

/// The campaign tag's intake rules: each refusal is `invalid_campaign` at
/// `campaign` (`wrong_type` when it is not a string).
extension HostileIntakeTests {
    func campaignMessage(_ campaign: String) -> String { Self.message(#","campaign":\#(campaign)"#) }

    func quoted(_ text: String) -> String { String(decoding: JSONValue.string(text).encoded(), as: UTF8.self) }

    func testInvalidCampaign() throws {
        for good in ["spring-sale-2026", "a", String(repeating: "c", count: 128), String(repeating: "é", count: 64),
                     "Soldes d'été 🌞", "a b", "\u{2028}"] {
            XCTAssertNil(Campaign.problem(good), good)
            let n = try PushNotification.decode(Array(campaignMessage(quoted(good)).utf8), policy: Examples.policy).get()
            XCTAssertEqual(n.campaign, good)
        }
        assertRejected(campaignMessage(#""""#), .invalidCampaign, at: "campaign", kind: .invalid)
        assertRejected(campaignMessage(quoted(String(repeating: "c", count: 129))), .invalidCampaign, at: "campaign")
        // 65 × "é" is 65 characters and 130 bytes.
        assertRejected(campaignMessage(quoted(String(repeating: "é", count: 65))), .invalidCampaign, at: "campaign")
        for control in [#"\n"#, #"\r"#, #"\t"#, #"\u0001"#, #"\u001f"#, #"\u007f"#, #"\u0085"#, #"\u009f"#] {
            let error = assertRejected(campaignMessage(#""a\#(control)b""#), .invalidCampaign, at: "campaign")
            XCTAssertEqual(error?.detail.contains("control character"), true, control)
        }
        assertRejected(campaignMessage(#""a\u0000b""#), .nulCharacter, at: "campaign")
        for wrong in ["5", "true", "[\"a\"]", "{}"] { assertRejected(campaignMessage(wrong), .wrongType, at: "campaign") }
        XCTAssertNil(try PushNotification.decode(Array(campaignMessage("null").utf8), policy: Examples.policy).get().campaign, "null is absent")
    }
}

/// The campaign tag's round trip through the intake JSON that retry, parked
/// and dead-letter messages carry, and the FCM `analytics_label` it defaults.
final class CampaignTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.app", fcmProjectID: "proj-1")
    let token = "fcm-token_AbCdEf0123456789:APA91bHx-example"

    /// Retry, parked and dead-letter messages are the notification's intake
    /// JSON: the campaign must survive it, or a retried delivery would escape
    /// its campaign's kill switch.
    func testTheCampaignSurvivesTheIntakeJSON() throws {
        let text = HostileIntakeTests.message(#","campaign":"spring""#)
        var n = try PushNotification.decode(Array(text.utf8), policy: Examples.policy).get()
        let again = try PushNotification.decode(n.intakeJSON().encoded(), policy: Examples.policy).get()
        XCTAssertEqual(again.campaign, "spring")
        XCTAssertEqual(again, n)
        n.campaign = nil
        XCTAssertFalse(String(decoding: n.intakeJSON().encoded(), as: UTF8.self).contains("campaign"))
    }

    func fcmBody(_ campaign: String?, options: [(key: String, value: JSONValue)] = []) throws -> JSONValue {
        var n = PushNotification(id: UUID(), app: "a", createdAt: Date(), recipients: [Recipient(token: token, platform: .android)],
                                 alert: .init(title: "T", body: "B"))
        n.campaign = campaign
        n.fcm.fcmOptions = options
        return try JSONValue.parse(try n.request(for: n.recipients[0], context: context).get().body)
    }

    func testFCMAnalyticsLabelDefaultsToAValidCampaign() throws {
        XCTAssertEqual(try fcmBody("spring-sale_2026.v2~%")["message"]?["fcm_options"]?["analytics_label"]?.stringValue,
                       "spring-sale_2026.v2~%")
        // The producer's own label wins; a null one is absent and replaced.
        XCTAssertEqual(try fcmBody("spring", options: [("analytics_label", .string("own"))])["message"]?["fcm_options"]?["analytics_label"]?.stringValue, "own")
        XCTAssertEqual(try fcmBody("spring", options: [("analytics_label", .null)])["message"]?["fcm_options"]?.objectMembers?.count, 1)
        XCTAssertEqual(try fcmBody("spring", options: [("analytics_label", .null)])["message"]?["fcm_options"]?["analytics_label"]?.stringValue, "spring")
        // Not a valid label (FCM would refuse the whole message): no label.
        for invalid in ["spring sale", "soldes-été", String(repeating: "c", count: 51), "a/b"] {
            XCTAssertNil(try fcmBody(invalid)["message"]?["fcm_options"], invalid)
        }
        XCTAssertNil(try fcmBody(nil)["message"]?["fcm_options"])
        XCTAssertNotNil(try fcmBody(String(repeating: "c", count: 50))["message"]?["fcm_options"])
        XCTAssertTrue(FCMTranslator.isValidAnalyticsLabel(String(repeating: "c", count: 50)))
        XCTAssertFalse(FCMTranslator.isValidAnalyticsLabel(""))
    }

    /// APNs, Web Push and Push Kit requests carry nothing of the campaign.
    func testOnlyFCMHearsOfTheCampaign() throws {
        let file = Examples.schemasDirectory.appendingPathComponent("examples/valid/campaign.json")
        var n = try PushNotification.decode(Examples.bytes(file), policy: Examples.policy).get()
        XCTAssertEqual(n.campaign, "spring-sale-2026")
        let ios = try n.request(for: n.recipients[0], context: context).get()
        XCTAssertFalse(String(decoding: ios.body, as: UTF8.self).contains("spring-sale-2026"))
        n.campaign = nil
        XCTAssertEqual(try n.request(for: n.recipients[0], context: context).get(), ios)
    }
}
