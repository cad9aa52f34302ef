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

    /// The parser reads its input through an unchecked buffer pointer: every
    /// truncation of every valid example, and each example with single bytes
    /// replaced by structural or invalid ones, must end in a value or a parse
    /// error (a read past the end traps in the debug builds the tests run in).
    /// Truncations of a valid document never parse as the whole document.
    func testTruncatedAndCorruptedExamplesGetAnAnswer() throws {
        // Without trailing whitespace, so no proper prefix is the whole document.
        let examples = try Examples.files("valid").map(Examples.bytes).map { bytes in
            Array(bytes[..<(bytes.lastIndex { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }.map { $0 + 1 } ?? 0)])
        }
        XCTAssertFalse(examples.isEmpty)
        var parsed = 0, refused = 0
        for bytes in examples {
            let whole = try JSONValue.parse(bytes)
            for length in 0..<bytes.count {
                if let value = try? JSONValue.parse(Array(bytes[..<length])) {
                    XCTAssertNotEqual(value, whole, "a prefix of \(length) bytes parsed as the whole document")
                    parsed += 1
                } else {
                    refused += 1
                }
            }
        }
        let replacements: [UInt8] = [0x22, 0x5C, 0x7B, 0x5D, 0x00, 0xFF]  // " \ { ] NUL and a byte never valid in UTF-8
        for bytes in examples.prefix(4) {
            for position in bytes.indices {
                for replacement in replacements where bytes[position] != replacement {
                    var corrupted = bytes
                    corrupted[position] = replacement
                    if (try? JSONValue.parse(corrupted)) != nil { parsed += 1 } else { refused += 1 }
                    _ = PushNotification.decode(corrupted, policy: Examples.policy)
                }
            }
        }
        XCTAssertGreaterThan(refused, parsed, "most corruptions are refused")
    }
}
