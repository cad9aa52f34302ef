import XCTest
@testable import PushKafka

/// One `kafka.properties` map feeds both clients of a worker; each gets only
/// what librdkafka documents for its type (issue 17: every worker logged
/// "session.timeout.ms … ignored by this producer" at start).
final class KafkaPropertyScopeTests: XCTestCase {
    func testLibrdkafkasOwnTableIsRead() {
        XCTAssertEqual(KafkaPropertyScope.table["session.timeout.ms"], "C")
        XCTAssertEqual(KafkaPropertyScope.table["linger.ms"], "P")
        XCTAssertEqual(KafkaPropertyScope.table["bootstrap.servers"], "*")
        XCTAssertGreaterThan(KafkaPropertyScope.table.count, 100)
    }

    func testEachClientKeepsOnlyWhatAppliesToIt() {
        let properties = ["session.timeout.ms": "6000", "linger.ms": "5", "security.protocol": "PLAINTEXT", "no.such.key": "1"]
        let producer = KafkaPropertyScope.applicable(properties, producer: true)
        XCTAssertEqual(producer.dropped, ["session.timeout.ms"])
        XCTAssertEqual(Set(producer.kept.keys), ["linger.ms", "security.protocol", "no.such.key"])
        let consumer = KafkaPropertyScope.applicable(properties, producer: false)
        XCTAssertEqual(consumer.dropped, ["linger.ms"])
        XCTAssertEqual(Set(consumer.kept.keys), ["session.timeout.ms", "security.protocol", "no.such.key"])
    }
}
