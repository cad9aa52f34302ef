import Foundation
import XCTest
@testable import PushCore

/// The cheap FCM paths give exactly what the general ones give: the token
/// check read in place accepts what the UTF8View walk accepted.
final class FCMWriterTests: XCTestCase {
    /// The token check as it was, walking `String.UTF8View`: the reference.
    static func referenceIsWellFormedToken(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard (20...4096).contains(utf8.count) else { return false }
        return utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ":")
        }
    }

    func testTokenCheckAcceptsExactlyWhatItDid() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-:")
        func token(_ count: Int) -> String { String((0..<count).map { alphabet[$0 % alphabet.count] }) }
        var cases: [(String, Bool)] = [
            ("", false), (token(19), false), (token(20), true), (token(163), true), (token(4096), true), (token(4097), false),
            (String(repeating: "é", count: 10), false),  // 20 bytes, 10 characters: non-ASCII
            (token(18) + "é", false), (token(4094) + "é", false), (token(4095) + "é", false),
            (token(40) + "\u{301}", false), (token(30) + "😀" + token(30), false), (token(30) + "\u{80}", false),
        ]
        // Every ASCII byte (and a few others) at the start, the middle and the end of a 20- and a 4096-byte token.
        for byte in Array(0x00...0x7F) + [0xA0, 0xFF] {
            let scalar = String(UnicodeScalar(UInt8(byte)))
            for length in [20, 4096] {
                for position in [0, length / 2, length - 1] {
                    var chars = Array(token(length))
                    chars[position] = Character(scalar)
                    let s = String(chars)
                    cases.append((s, Self.referenceIsWellFormedToken(s)))
                }
            }
        }
        // The forbidden classes, spelled out, so the reference itself is pinned.
        for forbidden in [" ", "/", "+", "=", ".", "!", "@", "[", "`", "{", "~", "\u{0}", "\u{7F}", "\n", "\"", "\\"] {
            cases.append((token(10) + forbidden + token(10), false))
        }
        for (s, expected) in cases {
            XCTAssertEqual(FCMTranslator.isWellFormedToken(s), expected, "\(s.utf8.count) bytes: \(s.prefix(40).debugDescription)")
            XCTAssertEqual(Self.referenceIsWellFormedToken(s), expected, "reference, \(s.utf8.count) bytes")
        }
        // Strings made from slices and from decoded bytes (all native here, so the in-place read).
        XCTAssertTrue(FCMTranslator.isWellFormedToken(String(("é" + token(30)).dropFirst())))
        XCTAssertFalse(FCMTranslator.isWellFormedToken(String(decoding: Array(token(30).utf8) + [0xFF], as: UTF8.self)))
    }
}
