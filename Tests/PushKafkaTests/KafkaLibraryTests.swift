import PushKafka
import XCTest

/// The loaded librdkafka's version, and the faults known for the versions in use.
final class KafkaLibraryTests: XCTestCase {
    /// Only librdkafka before 2.2.0 aborts a cooperative-sticky consumer closed before
    /// its first assignment, so only there does `close` keep the handle alive.
    func testOnlyAffectedLibrdkafkaVersionsGetTheEarlyCloseGuard() {
        XCTAssertTrue(KafkaLibrary.abortsOnEarlyCooperativeClose(0x0200_02ff), "Debian bookworm's 2.0.2")
        XCTAssertTrue(KafkaLibrary.abortsOnEarlyCooperativeClose(0x0201_01ff), "2.1.1")
        XCTAssertFalse(KafkaLibrary.abortsOnEarlyCooperativeClose(0x0202_00ff), "2.2.0 has the fix")
        XCTAssertFalse(KafkaLibrary.abortsOnEarlyCooperativeClose(0x0210_00ff), "2.16.0")
        XCTAssertEqual(KafkaLibrary.versionNumber >> 24, 2, "a librdkafka 2.x is loaded: \(KafkaLibrary.version)")
    }
}
