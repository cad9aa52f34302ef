import XCTest

@testable import PushKafka

/// One poll's messages share their topic's `String` when the name's bytes
/// repeat; any change of bytes (a longer name, a prefix, invalid UTF-8, an
/// empty name) gives exactly what `String(cString:)` gives.
final class TopicNameCacheTests: XCTestCase {
    func testEachNameIsWhatItsBytesSay() {
        let names: [[UInt8]] = [
            Array("push.notifications".utf8), Array("push.notifications".utf8), Array("push.notifications.retry.30s".utf8),
            Array("push.notifications".utf8), Array("push.notification".utf8), Array("push.notifications".utf8),
            [], [], Array("a".utf8), [0xFF, 0xFE, 0x61], [0xFF, 0xFE, 0x62], [0xC3, 0xA9], Array("é".utf8), [0x65, 0xCC, 0x81],
            Array(repeating: 0x78, count: 249), Array(repeating: 0x78, count: 249), Array(repeating: 0x78, count: 248),
        ]
        var cache = TopicNameCache()
        for (i, bytes) in names.enumerated() {
            let cString = bytes.map { CChar(bitPattern: $0) } + [0]
            let expected = cString.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let got = cString.withUnsafeBufferPointer { cache.name($0.baseAddress!) }
            XCTAssertEqual(got, expected, "name \(i)")
            XCTAssertEqual(Array(got.utf8), Array(expected.utf8), "name \(i), byte for byte")
        }
    }
}
