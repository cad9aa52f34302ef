import PushCore
import XCTest

@testable import PushSimulator

/// The simulator's JWT splitting; base64url and JSON are PushCore's (tested there).
final class JWTParsingTests: XCTestCase {
    func testSplitsHeaderClaimsAndSignature() throws {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"K"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"iss":"T","iat":1700000000,"exp":1.7e9}"#.utf8))
        let token = "\(header).\(claims).\(Base64URL.encode([1, 2, 3]))"
        let jwt = try XCTUnwrap(JWT(Substring(token)))
        XCTAssertEqual(jwt.algorithm, "ES256")
        XCTAssertEqual(jwt.keyID, "K")
        XCTAssertEqual(jwt.claims["iss"]?.stringValue, "T")
        XCTAssertEqual(jwt.claims["iat"]?.integerValue, 1_700_000_000)
        XCTAssertEqual(jwt.claims["exp"]?.integerValue, 1_700_000_000)
        XCTAssertEqual(jwt.signature, [1, 2, 3])
        XCTAssertEqual(jwt.signingInput, Array("\(header).\(claims)".utf8))
    }

    func testRejectsMalformedTokens() {
        let notObject = Base64URL.encode(Array("[1]".utf8))
        for token in ["a.b", "a.b.c.d", "\(notObject).\(notObject).AA", "!!.e30.AA", "e30.{.AA"] {
            XCTAssertNil(JWT(Substring(token)), token)
        }
        XCTAssertNotNil(JWT("e30.e30.AA"))  // {} . {} . 0x00
    }
}
