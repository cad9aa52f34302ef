import XCTest

@testable import PushSimulator

final class JSONParserTests: XCTestCase {
    func testParsesValuesAndEscapes() throws {
        let value = try JSONParser.parse(
            Array(#"{"a":[1,-2.5e3,true,false,null],"s":"x\"\\\/\n\u00e9\ud83d\ude00","o":{}}"#.utf8))
        let object = try XCTUnwrap(value.objectValue)
        XCTAssertEqual(object["a"], .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]))
        XCTAssertEqual(object["s"], .string("x\"\\/\né😀"))
        XCTAssertEqual(object["o"], .object([:]))
    }

    func testRejectsMalformedInput() {
        let bad = [
            "", "{", "{\"a\":}", "[1,]", "01", "\"\u{01}\"", "{\"a\":1} x", "\"\\ud800\"", "tru", "1.", "-",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for text in bad {
            XCTAssertThrowsError(try JSONParser.parse(Array(text.utf8)), text)
        }
    }

    func testTopLevelMemberSizes() throws {
        let (members, sizes) = try JSONParser.parseTopLevelObject(Array(#"{ "message" : {"a":"bc"} , "x":1}"#.utf8))
        XCTAssertEqual(members.count, 2)
        XCTAssertEqual(sizes["message"], #"{"a":"bc"}"#.utf8.count)
    }

    func testBase64URLRoundTrip() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) & 0xFF) }
            XCTAssertEqual(Base64URL.decode(Substring(Base64URL.encode(bytes))), bytes)
        }
        XCTAssertNil(Base64URL.decode("a+b/"))
    }
}
