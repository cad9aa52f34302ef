import PushCore
import Testing
import XCTest

/// The one base64url: JWT parts, Web Push keys, VAPID keys and topics all use it.
final class Base64URLTests: XCTestCase {
    func testBase64URLRoundTrip() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) & 0xFF) }
            XCTAssertEqual(Base64URL.decode(Substring(Base64URL.encode(bytes))), bytes)
        }
        XCTAssertNil(Base64URL.decode("a+b/"))
    }
}

@Suite("Base64URL")
struct Base64URLStrictTests {
    @Test("strict base64url: padding rules and alphabet")
    func base64URL() {
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("AQ") == [1])
        #expect(Base64URL.decode("AQ==") == [1])
        #expect(Base64URL.decode("AQ=") == nil)
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("A/") == nil)
        #expect(Base64URL.decode("_-8") == [0xFF, 0xEF])
        #expect(Base64URL.encode([0xFF, 0xEF]) == "_-8")
    }
}
