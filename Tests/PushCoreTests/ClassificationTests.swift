import Foundation
import XCTest
@testable import PushCore

final class ClassificationTests: XCTestCase {
    func apns(_ status: Int, _ body: String = "", headers: [(name: String, value: String)] = []) -> ProviderOutcome {
        ResponseClassifier.classify(.apns, ProviderResponse(status: status, headers: headers, body: Array(body.utf8)))
    }

    func fcm(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> ProviderOutcome {
        ResponseClassifier.classify(.fcm, ProviderResponse(status: status, headers: headers, body: Array(body.utf8)))
    }

    func fcmError(_ status: Int, _ grpc: String, _ code: String?, message: String = "m") -> String {
        let details = code.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return #"{"error":{"code":\#(status),"message":"\#(message)","status":"\#(grpc)"\#(details)}}"#
    }

    func testAPNsAccepted() {
        XCTAssertEqual(apns(200, headers: [("apns-id", "abc")]), .accepted(providerMessageID: "abc"))
    }

    func testAPNs410CarriesTheTimestamp() {
        XCTAssertEqual(
            apns(410, #"{"reason":"Unregistered","timestamp":1763726400000}"#),
            .invalidToken(reason: ProviderReason("Unregistered"), since: Date(timeIntervalSince1970: 1_763_726_400)))
        XCTAssertEqual(apns(410, #"{"reason":"ExpiredToken"}"#), .invalidToken(reason: ProviderReason("ExpiredToken"), since: nil))
    }

    func testAPNsEveryDocumentedReason() {
        let rejected400 = ["BadCollapseId", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
                           "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
                           "MissingTopic", "PayloadEmpty", "TopicDisallowed"]
        for reason in rejected400 {
            XCTAssertEqual(apns(400, #"{"reason":"\#(reason)"}"#), .rejected(reason: ProviderReason(reason)), reason)
        }
        for reason in ["BadDeviceToken", "DeviceTokenNotForTopic"] {
            XCTAssertEqual(apns(400, #"{"reason":"\#(reason)"}"#), .invalidToken(reason: ProviderReason(reason), since: nil))
        }
        for reason in ["BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden",
                       "InvalidProviderToken", "MissingProviderToken", "BadEnvironmentKeyIdInToken", "UnrelatedKeyIdInToken"] {
            XCTAssertEqual(apns(403, #"{"reason":"\#(reason)"}"#), .authFailure(reason: ProviderReason(reason)), reason)
        }
        XCTAssertEqual(apns(404, #"{"reason":"BadPath"}"#), .rejected(reason: ProviderReason("BadPath")))
        XCTAssertEqual(apns(405, #"{"reason":"MethodNotAllowed"}"#), .rejected(reason: ProviderReason("MethodNotAllowed")))
        XCTAssertEqual(apns(413, #"{"reason":"PayloadTooLarge"}"#), .rejected(reason: ProviderReason("PayloadTooLarge")))
        XCTAssertEqual(apns(429, #"{"reason":"TooManyRequests"}"#, headers: [("retry-after", "7")]),
                       .transient(reason: ProviderReason("TooManyRequests"), retryAfter: .seconds(7)))
        XCTAssertEqual(apns(429, #"{"reason":"TooManyProviderTokenUpdates"}"#),
                       .transient(reason: ProviderReason("TooManyProviderTokenUpdates"), retryAfter: nil))
        XCTAssertEqual(apns(500, #"{"reason":"InternalServerError"}"#), .transient(reason: ProviderReason("InternalServerError"), retryAfter: nil))
        XCTAssertEqual(apns(503, #"{"reason":"ServiceUnavailable"}"#), .transient(reason: ProviderReason("ServiceUnavailable"), retryAfter: nil))
        XCTAssertEqual(apns(503, #"{"reason":"Shutdown"}"#), .transient(reason: ProviderReason("Shutdown"), retryAfter: nil))
    }

    func testAPNsUnknownReasonsAreKeptVerbatim() {
        XCTAssertEqual(apns(400, #"{"reason":"SomethingNew"}"#), .rejected(reason: ProviderReason("SomethingNew")))
        XCTAssertEqual(apns(418, #"{"reason":"Teapot"}"#), .unknown(status: 418, reason: ProviderReason("Teapot")))
        XCTAssertEqual(apns(502, "<html>"), .transient(reason: ProviderReason("Unparsed"), retryAfter: nil))
    }

    func testFCMEveryErrorCode() {
        XCTAssertEqual(fcm(200, #"{"name":"projects/p/messages/1"}"#), .accepted(providerMessageID: "projects/p/messages/1"))
        XCTAssertEqual(fcm(404, fcmError(404, "NOT_FOUND", "UNREGISTERED")), .invalidToken(reason: ProviderReason("UNREGISTERED"), since: nil))
        XCTAssertEqual(fcm(403, fcmError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH")), .invalidToken(reason: ProviderReason("SENDER_ID_MISMATCH"), since: nil))
        XCTAssertEqual(fcm(400, fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")), .rejected(reason: ProviderReason("INVALID_ARGUMENT")))
        XCTAssertEqual(fcm(400, fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token")),
                       .invalidToken(reason: ProviderReason("INVALID_ARGUMENT"), since: nil))
        XCTAssertEqual(fcm(429, fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED")), .transient(reason: ProviderReason("QUOTA_EXCEEDED"), retryAfter: .seconds(60)))
        XCTAssertEqual(fcm(429, fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), headers: [("retry-after", "120")]),
                       .transient(reason: ProviderReason("QUOTA_EXCEEDED"), retryAfter: .seconds(120)))
        XCTAssertEqual(fcm(503, fcmError(503, "UNAVAILABLE", "UNAVAILABLE"), headers: [("retry-after", "3")]),
                       .transient(reason: ProviderReason("UNAVAILABLE"), retryAfter: .seconds(3)))
        XCTAssertEqual(fcm(500, fcmError(500, "INTERNAL", "INTERNAL")), .transient(reason: ProviderReason("INTERNAL"), retryAfter: nil))
        XCTAssertEqual(fcm(401, fcmError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR")), .authFailure(reason: ProviderReason("THIRD_PARTY_AUTH_ERROR")))
        XCTAssertEqual(fcm(401, fcmError(401, "UNAUTHENTICATED", nil)), .authFailure(reason: ProviderReason("UNAUTHENTICATED")))
        XCTAssertEqual(fcm(500, fcmError(500, "UNKNOWN", "UNSPECIFIED_ERROR")), .transient(reason: ProviderReason("UNSPECIFIED_ERROR"), retryAfter: nil))
        XCTAssertEqual(fcm(400, fcmError(400, "UNKNOWN", "UNSPECIFIED_ERROR")), .rejected(reason: ProviderReason("UNSPECIFIED_ERROR")))
    }

    func testFCMUnparseableBodiesStillClassify() {
        XCTAssertEqual(fcm(502, "Bad Gateway"), .transient(reason: ProviderReason("HTTP502"), retryAfter: nil))
        XCTAssertEqual(fcm(418, ""), .unknown(status: 418, reason: ProviderReason("HTTP418")))
    }

    func testRetryAfterHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_795_262_400)
        let response = ProviderResponse(status: 503, headers: [("retry-after", "Sat, 21 Nov 2026 12:00:30 GMT")], body: [])
        XCTAssertEqual(ResponseClassifier.retryAfter(response, now: now), .seconds(30))
    }
}
