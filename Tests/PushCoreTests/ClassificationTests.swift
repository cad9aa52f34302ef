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
                           "DuplicateHeaders", "InvalidPushType", "MissingDeviceToken",
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
        // IdleTimeout is about the connection, not the notification: send again.
        XCTAssertEqual(apns(400, #"{"reason":"IdleTimeout"}"#), .transient(reason: ProviderReason("IdleTimeout"), retryAfter: nil))
        XCTAssertEqual(apns(410, #"{"reason":"ExpiredToken","timestamp":1763726400000}"#),
                       .invalidToken(reason: ProviderReason("ExpiredToken"), since: Date(timeIntervalSince1970: 1_763_726_400)))
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

    func testFCMStatusWithoutFCMDetail() {
        // A 404 without FCM's UNREGISTERED detail is a wrong project/path: never invalidate the device for it.
        XCTAssertEqual(fcm(404, fcmError(404, "NOT_FOUND", nil)), .rejected(reason: ProviderReason("NOT_FOUND")))
        // A project-wide rate limit (google.rpc.ErrorInfo, no FCM errorCode) waits at least a minute too.
        XCTAssertEqual(fcm(429, fcmError(429, "RESOURCE_EXHAUSTED", nil), headers: [("retry-after", "5")]),
                       .transient(reason: ProviderReason("RESOURCE_EXHAUSTED"), retryAfter: .seconds(60)))
        XCTAssertEqual(fcm(403, fcmError(403, "PERMISSION_DENIED", nil)), .authFailure(reason: ProviderReason("PERMISSION_DENIED")))
        XCTAssertEqual(fcm(503, fcmError(503, "UNAVAILABLE", nil)), .transient(reason: ProviderReason("UNAVAILABLE"), retryAfter: nil))
        // The BadRequest field violation on message.token marks a malformed token, whatever the message says.
        let body = #"{"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"Invalid registration token"}]}]}}"#
        XCTAssertEqual(fcm(400, body), .invalidToken(reason: ProviderReason("INVALID_ARGUMENT"), since: nil))
        let dataViolation = body.replacingOccurrences(of: "message.token", with: "message.data[0].value")
            .replacingOccurrences(of: "Invalid registration token", with: "bad value")
        XCTAssertEqual(fcm(400, dataViolation), .rejected(reason: ProviderReason("INVALID_ARGUMENT")))
        XCTAssertEqual(fcm(418, fcmError(418, "SOMETHING_NEW", "BRAND_NEW_CODE")), .unknown(status: 418, reason: ProviderReason("BRAND_NEW_CODE")))
    }

    func testFCMUnparseableBodiesStillClassify() {
        XCTAssertEqual(fcm(502, "Bad Gateway"), .transient(reason: ProviderReason("HTTP502"), retryAfter: nil))
        XCTAssertEqual(fcm(418, ""), .unknown(status: 418, reason: ProviderReason("HTTP418")))
    }

    func testRetryAfterHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_795_262_400)
        let response = ProviderResponse(status: 503, headers: [("retry-after", "Sat, 21 Nov 2026 12:00:30 GMT")], body: [])
        XCTAssertEqual(ResponseClassifier.retryAfter(response, now: now), .seconds(30))
        XCTAssertEqual(ResponseClassifier.classify(.apns, ProviderResponse(status: 503, headers: [("retry-after", "Sat, 21 Nov 2026 12:00:30 GMT")], body: []), now: now),
                       .transient(reason: ProviderReason("HTTP503"), retryAfter: .seconds(30)))
        let garbage = ProviderResponse(status: 503, headers: [("retry-after", "soon")], body: [])
        XCTAssertNil(ResponseClassifier.retryAfter(garbage, now: now))
    }

    /// A reason longer than any provider gives is cut to 256 bytes (it is an
    /// index key in the ledger), on a scalar boundary, ending in `…`.
    func testAnOverlongReasonIsCut() {
        func reason(_ outcome: ProviderOutcome) -> String? {
            switch outcome {
            case .rejected(let r), .invalidToken(let r, _), .authFailure(let r), .transient(let r, _), .unknown(_, let r): r.rawValue
            case .accepted: nil
            }
        }
        let long = String(repeating: "BadTopic", count: 2000)
        let cut = reason(apns(400, #"{"reason":"\#(long)"}"#))
        XCTAssertEqual(cut?.utf8.count, 256)
        XCTAssertEqual(cut, String(repeating: "BadTopic", count: 32).prefix(253) + "…")
        // Two-byte scalars: 126 of them (252 bytes) and the ellipsis, never half a scalar.
        let accented = reason(apns(400, #"{"reason":"\#(String(repeating: "é", count: 1000))"}"#))
        XCTAssertEqual(accented, String(repeating: "é", count: 126) + "…")
        // FCM's errorCode the same way; a reason at the limit is kept whole.
        let fcmCut = reason(fcm(400, fcmError(400, "INVALID_ARGUMENT", String(repeating: "X", count: 5000))))
        XCTAssertLessThanOrEqual(fcmCut?.utf8.count ?? .max, ProviderReason.maxBytes)
        XCTAssertEqual(ProviderReason(String(repeating: "a", count: 256)).rawValue.count, 256)
        XCTAssertEqual(ProviderReason(rawValue: String(repeating: "a", count: 257)).rawValue, String(repeating: "a", count: 253) + "…")
    }

    /// A server's Retry-After is taken up to an hour: `9223372036854775807`
    /// or a date in 9999 would pause an app's sends until the worker restarts.
    func testRetryAfterIsReadAndAtMostAnHour() {
        let now = Date(timeIntervalSince1970: 1_795_262_400)  // Sat, 21 Nov 2026 12:00:00 GMT
        let cases: [(String?, Duration?)] = [
            ("7", .seconds(7)), ("0", .seconds(0)), ("  12 ", .seconds(12)), ("3600", .seconds(3600)), ("3601", .seconds(3600)),
            ("9223372036854775807", .seconds(3600)), ("99999999999999999999999999", .seconds(3600)),
            ("Sat, 21 Nov 2026 12:01:30 GMT", .seconds(90)), ("Sat, 21 Nov 2026 11:00:00 GMT", .seconds(0)),
            ("Fri, 31 Dec 9999 23:59:59 GMT", .seconds(3600)),
            ("-5", nil), ("+5", nil), ("5s", nil), ("1.5", nil), ("soon", nil), ("", nil), (nil, nil),
        ]
        for (raw, expected) in cases {
            XCTAssertEqual(RetryAfter.parse(raw, now: now), expected, raw ?? "nil")
        }
        XCTAssertEqual(fcm(429, fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), headers: [("retry-after", "9223372036854775807")]),
                       .transient(reason: ProviderReason("QUOTA_EXCEEDED"), retryAfter: .seconds(RetryAfter.maxSeconds)))
        XCTAssertEqual(apns(429, #"{"reason":"TooManyRequests"}"#, headers: [("retry-after", "86400")]),
                       .transient(reason: ProviderReason("TooManyRequests"), retryAfter: .seconds(3600)))
    }

    /// A 410's timestamp is never later than now, nor infinite: a `since` in the
    /// future would outrank the device's later registrations and keep it dead.
    func testAPNs410TimestampIsNotInTheFuture() {
        let now = Date(timeIntervalSince1970: 1_795_262_400)
        func since(_ timestamp: String) -> Date?? {
            let outcome = ResponseClassifier.classify(.apns, ProviderResponse(
                status: 410, headers: [], body: Array(#"{"reason":"Unregistered","timestamp":\#(timestamp)}"#.utf8)), now: now)
            guard case .invalidToken(_, let since) = outcome else { return nil }
            return .some(since)
        }
        XCTAssertEqual(since("1763726400000"), .some(Date(timeIntervalSince1970: 1_763_726_400)))
        XCTAssertEqual(since("99999999999999"), .some(now), "the future is now")
        XCTAssertEqual(since(#""99999999999999""#), .some(now))
        XCTAssertEqual(since("1e300"), .some(now))
        XCTAssertEqual(since(#""inf""#), .some(nil))
        XCTAssertEqual(since(#""nan""#), .some(nil))
        XCTAssertEqual(since(#""-inf""#), .some(nil))
    }

    /// The server's message id goes on the delivery row: at most 256 bytes.
    func testAProviderMessageIDIsBounded() {
        let long = String(repeating: "i", count: 60_000)
        let outcomes: [ProviderOutcome] = [
            apns(200, headers: [("apns-id", long)]),
            fcm(200, #"{"name":"\#(long)"}"#),
            ResponseClassifier.classify(.webpush, ProviderResponse(status: 201, headers: [("location", long)], body: [])),
        ]
        for outcome in outcomes {
            guard case .accepted(let id?) = outcome else { XCTFail("\(outcome)"); continue }
            XCTAssertEqual(id.utf8.count, ResponseClassifier.maxProviderMessageIDBytes)
            XCTAssertTrue(id.hasSuffix("…"))
        }
        XCTAssertEqual(apns(200, headers: [("apns-id", "abc")]), .accepted(providerMessageID: "abc"))
    }
}
