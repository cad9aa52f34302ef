import Foundation
import XCTest
@testable import PushCore

final class HMSClassificationTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    func hms(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> ProviderOutcome {
        ResponseClassifier.classifyHMS(ProviderResponse(status: status, headers: headers, body: Array(body.utf8)), now: now)
    }

    func answer(_ code: String, msg: String = "m", requestID: String = "r1") -> String {
        #"{"code":"\#(code)","msg":\#(String(decoding: JSONValue.string(msg).encoded(), as: UTF8.self)),"requestId":"\#(requestID)"}"#
    }

    func reason(_ text: String) -> ProviderReason { ProviderReason(text) }

    func testSuccessCarriesTheRequestID() {
        XCTAssertEqual(hms(200, answer("80000000", msg: "Success", requestID: "157xx006")), .accepted(providerMessageID: "157xx006"))
        XCTAssertEqual(hms(200, #"{"code":"80000000"}"#), .accepted(providerMessageID: nil))
    }

    func testCodeAsNumberOrPaddedString() {
        XCTAssertEqual(hms(200, #"{"code":80000000,"requestId":12}"#), .accepted(providerMessageID: "12"))
        XCTAssertEqual(hms(200, #"{"code":8.0e7}"#), .accepted(providerMessageID: nil))
        XCTAssertEqual(hms(200, #"{"code":" 80300007 "}"#), .invalidToken(reason: reason("80300007"), since: nil))
        XCTAssertEqual(hms(200, #"{"code":80300007.5}"#), .unknown(status: 200, reason: reason("HTTP200")))
    }

    func testPartialSuccessForOneTokenIsThatTokenInvalid() {
        let msg = #"{"success":0,"failure":1,"illegal_tokens":["tok"]}"#
        XCTAssertEqual(hms(200, answer("80100000", msg: msg)), .invalidToken(reason: reason("80100000"), since: nil))
        // Huawei's newer per-reason shape.
        let grouped = #"{"failure":1,"illegalTokens":{"noPushTypeRight":["tok"]}}"#
        XCTAssertEqual(hms(200, answer("80100000", msg: grouped)), .invalidToken(reason: reason("80100000"), since: nil))
        // A msg that is not JSON, or misses fields: the code alone says the token failed.
        for hostile in ["not json", "", "[]", "{}", #"{"illegal_tokens":"tok"}"#, #"{"success":"x"}"#] {
            XCTAssertEqual(hms(200, answer("80100000", msg: hostile)), .invalidToken(reason: reason("80100000"), since: nil), hostile)
        }
        XCTAssertEqual(hms(200, #"{"code":"80100000"}"#), .invalidToken(reason: reason("80100000"), since: nil))
        XCTAssertEqual(hms(200, #"{"code":"80100000","msg":12}"#), .invalidToken(reason: reason("80100000"), since: nil))
    }

    func testPartialSuccessThatSaysItSucceededIsAccepted() {
        let msg = #"{"success":1,"failure":0,"illegal_tokens":[]}"#
        XCTAssertEqual(hms(200, answer("80100000", msg: msg, requestID: "r9")), .accepted(providerMessageID: "r9"))
        XCTAssertEqual(hms(200, answer("80100000", msg: #"{"success":"1"}"#)), .accepted(providerMessageID: "r1"))
    }

    func testAllTokensInvalid() {
        XCTAssertEqual(hms(200, answer("80300007")), .invalidToken(reason: reason("80300007"), since: nil))
        XCTAssertEqual(hms(400, answer("80300007")), .invalidToken(reason: reason("80300007"), since: nil))
    }

    func testAccessTokenProblemsAreAuthFailures() {
        for code in ["80200001", "80200003", "80300002", "80600003"] {
            XCTAssertEqual(hms(200, answer(code)), .authFailure(reason: reason(code)), code)
            XCTAssertEqual(hms(401, answer(code)), .authFailure(reason: reason(code)), code)
        }
        XCTAssertEqual(hms(401, ""), .authFailure(reason: reason("HTTP401")))
        XCTAssertEqual(hms(401, answer("80000000")), .authFailure(reason: reason("80000000")))
        XCTAssertEqual(hms(403, "<html>"), .authFailure(reason: reason("HTTP403")))
    }

    func testRequestErrorsAreRejected() {
        for code in ["80100001", "80100002", "80100003", "80100004", "80100013", "80100016", "80100017", "80100018",
                     "80300008", "80300010", "80300011", "80300013"] {
            XCTAssertEqual(hms(400, answer(code)), .rejected(reason: reason(code)), code)
            XCTAssertEqual(hms(200, answer(code)), .rejected(reason: reason(code)), code)
        }
    }

    func testFlowControlAndServerErrorsAreTransient() {
        XCTAssertEqual(hms(503, "", headers: [("retry-after", "7")]), .transient(reason: reason("HTTP503"), retryAfter: .seconds(7)))
        XCTAssertEqual(hms(503, #"{"msg":"Flow control"}"#), .transient(reason: reason("HTTP503"), retryAfter: nil))
        XCTAssertEqual(hms(503, answer("80300007")), .transient(reason: reason("80300007"), retryAfter: nil))
        XCTAssertEqual(hms(500, answer("81000001")), .transient(reason: reason("81000001"), retryAfter: nil))
        XCTAssertEqual(hms(200, answer("81000001")), .transient(reason: reason("81000001"), retryAfter: nil))
        XCTAssertEqual(hms(502, "bad gateway"), .transient(reason: reason("HTTP502"), retryAfter: nil))
        XCTAssertEqual(hms(429, "", headers: [("retry-after", "2")]), .transient(reason: reason("HTTP429"), retryAfter: .seconds(2)))
    }

    func testUnknownCodesFallBackOnTheStatus() {
        XCTAssertEqual(hms(200, answer("89999999")), .unknown(status: 200, reason: reason("89999999")))
        XCTAssertEqual(hms(400, answer("89999999")), .rejected(reason: reason("89999999")))
        XCTAssertEqual(hms(404, ""), .rejected(reason: reason("HTTP404")))
        XCTAssertEqual(hms(302, ""), .unknown(status: 302, reason: reason("HTTP302")))
        // Success code under an error status is not a success.
        XCTAssertEqual(hms(400, answer("80000000")), .rejected(reason: reason("80000000")))
    }

    func testHostileBodiesStayTotal() {
        XCTAssertEqual(hms(200, "not json"), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, ""), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, #"{"code":1e999}"#), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, #"{"code":123456789012345678901234567890}"#), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, #"{"code":null}"#), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, #"{"code":["80000000"]}"#), .unknown(status: 200, reason: reason("HTTP200")))
        XCTAssertEqual(hms(200, "[1,2]"), .unknown(status: 200, reason: reason("HTTP200")))
        // A huge code is cut to a bounded reason.
        let long = String(repeating: "9", count: 10_000)
        guard case .unknown(200, let r) = hms(200, #"{"code":"\#(long)"}"#) else { return XCTFail() }
        XCTAssertEqual(r.rawValue.count, HMSAnswer.maxFieldLength)
        // Random bytes never trap.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = ResponseClassifier.classifyHMS(ProviderResponse(status: 200, headers: [], body: bytes), now: now)
        }
    }

    func testEveryStatusWithEveryKnownCodeIsClassified() {
        let codes = ["80000000", "80100000", "80100001", "80200001", "80200003", "80300002", "80300007", "80300008",
                     "80300010", "80300011", "80600003", "81000001", "x"]
        for status in [100, 200, 201, 204, 301, 400, 401, 403, 404, 405, 413, 429, 500, 502, 503, 504, 599, 600, -1] {
            for code in codes {
                let outcome = hms(status, answer(code))
                if case .accepted = outcome { XCTAssertTrue((200...299).contains(status), "\(status) \(code)") }
            }
        }
    }
}
