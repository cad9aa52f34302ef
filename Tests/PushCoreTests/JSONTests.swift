import XCTest
@testable import PushCore

final class JSONTests: XCTestCase {
    func testRoundTripKeepsKeyOrderAndEscapes() throws {
        let text = #"{"z":1,"a":[true,false,null,-2.5,"q\"\\\n\u0001é😀"],"m":{}}"#
        let value = try JSONValue.parse(Array(text.utf8))
        XCTAssertEqual(String(decoding: value.encoded(), as: UTF8.self), #"{"z":1,"a":[true,false,null,-2.5,"q\"\\\n\u0001é😀"],"m":{}}"#)
    }

    func testSurrogatePairsDecode() throws {
        let value = try JSONValue.parse(Array(#""\ud83d\ude00""#.utf8))
        XCTAssertEqual(value, .string("😀"))
    }

    func testRejectsTrailingGarbageAndLeadingZeros() {
        XCTAssertThrowsError(try JSONValue.parse(Array("{} x".utf8)))
        XCTAssertThrowsError(try JSONValue.parse(Array("01".utf8)))
        XCTAssertThrowsError(try JSONValue.parse(Array("1.".utf8)))
    }
}
