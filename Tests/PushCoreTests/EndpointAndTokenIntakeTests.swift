import Foundation
import XCTest
@testable import PushCore

/// A Web Push endpoint or a Push Kit token that cannot be sent to is refused
/// at intake, at its path, with the reason the sender would give later:
/// intake and sealing ask the same rule (`WebPushEndpointRules`), and intake
/// and translation the same token rule (`HMSTranslator.isWellFormedToken`).
final class EndpointAndTokenIntakeTests: XCTestCase {
    static let p256dh = "BHs4-4Fsn8ddh2d0UKUr5mRye3b_C01_XFFHs5iWnpWPLnSdE91tcZt4aD-frWbHm9_iQg4cv4D7T50aXxD3qF4"
    static let auth = "60eDa6i6clPr6AyFvl75NA"

    static func message(recipient: String) -> [UInt8] {
        Array(#"{"schema_version":1,"id":"6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[\#(recipient)],"alert":{"title":"t","body":"b"}}"#.utf8)
    }

    static func web(_ endpoint: String) -> [UInt8] {
        let quoted = String(decoding: JSONValue.string(endpoint).encoded(), as: UTF8.self)
        return message(recipient: #"{"platform":"web","subscription":{"endpoint":\#(quoted),"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}}"#)
    }

    static func huawei(_ token: String) -> [UInt8] {
        message(recipient: #"{"token":\#(String(decoding: JSONValue.string(token).encoded(), as: UTF8.self)),"platform":"huawei"}"#)
    }

    /// The rejection of `bytes`: `invalid_value` at `path`, its detail containing `says`.
    func assertRefused(_ bytes: [UInt8], at path: String, says: String, file: StaticString = #filePath, line: UInt = #line) {
        switch PushNotification.decode(bytes, policy: Examples.policy) {
        case .success:
            XCTFail("accepted: \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
        case .failure(let error):
            XCTAssertEqual(error.reason, .invalidValue, "\(error)", file: file, line: line)
            XCTAssertEqual(error.fieldPath, path, "\(error)", file: file, line: line)
            XCTAssertTrue(error.detail.contains(says), "\(error.detail) does not say \(says)", file: file, line: line)
        }
    }

    /// Each endpoint sealing refuses, refused at intake with its reason named.
    func testAnEndpointSealingRefusesIsRefusedAtIntakeSayingWhy() {
        let path = "recipients[0].subscription.endpoint"
        let cases: [(String, String)] = [
            ("https://user:pw@push.example.net/wp/x", "userinfo"),
            ("https://user@push.example.net/wp/x", "userinfo"),
            ("https://push.example.net/wp/x#frag", "fragment"),
            ("https://push.example.net:99999/wp/x", "is not 1-65535"),
            ("https://push.example.net:0/wp/x", "is not 1-65535"),
            ("https://push.example.net:65536/wp/x", "is not 1-65535"),
            ("https://push.example.net/wp/\u{A0}x", "whitespace"),
            ("https://push.example.net/wp/\u{2028}x", "whitespace"),
            ("https://push.example.net/wp/\u{3000}x", "whitespace"),
            ("https://push.example.net/wp/\u{85}x", "whitespace"),
            ("https://püsh.example.net/wp/x", "outside ASCII"),
            ("https://push.example.net/wp/%zz", "two hex digits"),
            ("https://push.example.net/wp/<x>", "%-encoded"),
            ("http://push.example.net/wp/x", "https://"),
            ("https:///wp/x", "no host"),
        ]
        for (endpoint, reason) in cases {
            assertRefused(Self.web(endpoint), at: path, says: reason)
            // The very rule sealing applies (WebPushEndpoint in PushProviders asks it).
            guard case .failure(let problem) = WebPushEndpointRules.origin(of: endpoint) else {
                XCTFail("\(endpoint): sealing would take it")
                continue
            }
            XCTAssertTrue(problem.reason.contains(reason), problem.reason)
        }
        // Endpoints browsers make are taken, and their origin is the VAPID audience.
        for (endpoint, origin) in [
            ("https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH-x_y", "https://fcm.googleapis.com"),
            ("https://updates.push.services.mozilla.com/wpush/v2/gAAAAA", "https://updates.push.services.mozilla.com"),
            ("HTTPS://Web.Push.Apple.com:443/QGk9Xk?x=1", "https://web.push.apple.com"),
            ("https://[::1]:8443/wp/x", "https://[::1]:8443"),
            ("https://push.example.net:65535/wp/%C3%A9", "https://push.example.net:65535"),
        ] {
            XCTAssertNoThrow(try PushNotification.decode(Self.web(endpoint), policy: Examples.policy).get(), endpoint)
            XCTAssertEqual(try? WebPushEndpointRules.origin(of: endpoint).get(), origin)
        }
    }

    /// A Push Kit token translation would refuse (not 1-512 bytes of
    /// printable ASCII without spaces) is refused at intake, at its path.
    func testAPushKitTokenTranslationRefusesIsRefusedAtIntake() {
        for token in ["bad token!", "IQAAAé", "IQ\tA", "IQ\u{7F}A", String(repeating: "T", count: 513)] {
            assertRefused(Self.huawei(token), at: "recipients[0].token", says: "printable ASCII")
        }
        XCTAssertNoThrow(try PushNotification.decode(Self.huawei(String(repeating: "T", count: 512)), policy: Examples.policy).get())
        XCTAssertNoThrow(try PushNotification.decode(Self.huawei("IQAAAACy0wNX:bGyW-_.AI4j6Sv"), policy: Examples.policy).get())
        // Other platforms' tokens are judged by translation, per delivery, as before.
        let android = Self.message(recipient: #"{"token":"bad token!","platform":"android"}"#)
        XCTAssertNoThrow(try PushNotification.decode(android, policy: Examples.policy).get())
    }
}
