import Foundation
import XCTest
@testable import PushCore

/// The cheap paths of decode give exactly what the general ones give: the
/// UUID parser agrees with Foundation.
final class DecodeFastPathTests: XCTestCase {
    func testUUIDParserAgreesWithFoundation() {
        let canonical = "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f"
        var cases = [
            canonical, canonical.uppercased(), "4F1c6f0E-8a5b-4C3d-9e2f-0A1b2c3d4e5f", "00000000-0000-0000-0000-000000000000",
            "", "x", String(canonical.dropLast()), canonical + "0", canonical.replacingOccurrences(of: "-", with: ""),
            " " + String(canonical.dropFirst()), "+f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5g",
            "4f1c6f0e_8a5b-4c3d-9e2f-0a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f0-a1b2c3d4e5f", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5\u{0}",
            "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4é", "{4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e5f}", "4f1c6f0e-8a5b-4c3d-9e2f-0a1b2c3d4e 5",
        ]
        // Every single-byte change of the canonical form, at every position.
        let replacements: [Character] = ["-", "0", "a", "F", "g", " ", "+", "x"]
        for i in 0..<canonical.count {
            for r in replacements {
                var chars = Array(canonical)
                chars[i] = r
                cases.append(String(chars))
            }
        }
        for text in cases {
            XCTAssertEqual(FieldReader.parseUUID(text), UUID(uuidString: text), "\"\(text)\"")
        }
    }
}
