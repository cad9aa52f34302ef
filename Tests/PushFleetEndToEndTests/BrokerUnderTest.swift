import Foundation
import PushCore
import PushTestSupport
import XCTest
import PushTestSupport

/// The broker a broker-tier drill runs against, and how every `pushfleet`
/// process of the drill reaches it:
/// - `mock`: librdkafka's mock cluster (`pushfleet mock-kafka`, 3 brokers),
///   started here, with the librdkafka the binary links (Debian's 2.0.2);
/// - `tansu`: a real Kafka-compatible broker started by scripts/with-tansu.sh
///   (`make test` does), reached with the current librdkafka that script names:
///   Debian's 2.0.2 cannot talk to it.
/// Each drill uses topics of its own prefix, so drills share one Tansu.
final class BrokerUnderTest {
    enum Kind: String { case mock, tansu }

    /// Partitions of the intake, retry, receipts and devices topics; the dead-letter topic has 3.
    static let partitions = 6
    static let deadLetterPartitions = 3
    static let retryTiers = ["5s", "1m", "10m"]

    let kind: Kind
    let prefix: String
    private(set) var bootstrap = ""
    /// The environment of every `pushfleet` process that talks to this broker.
    let environment: [String: String]
    /// `pushfleet topics create` as run against the broker (exit code and output).
    private(set) var topicsCreate: TestEnvironment.Run?
    private var mock: FuzzProcess?

    /// The broker `kind`, or a skip when it is not there (a failure under CI).
    init(_ kind: Kind, prefix: String) throws {
        self.kind = kind
        self.prefix = prefix
        switch kind {
        case .mock:
            environment = [:]
        case .tansu:
            let env = ProcessInfo.processInfo.environment
            guard let bootstrap = env["PUSHFLEET_TANSU_BOOTSTRAP"], let library = env["PUSHFLEET_TANSU_LIBRARY_PATH"] else {
                if env["CI"] != nil { throw TestFailure("CI run without Tansu: `make test` runs the suite under scripts/with-tansu.sh") }
                throw XCTSkip("no Tansu: run through `make test` (or scripts/with-tansu.sh swift test), which starts one")
            }
            self.bootstrap = bootstrap
            environment = ["LD_LIBRARY_PATH": library]
        }
    }

    /// Every topic of the fleet's layout under this prefix (both lanes), as `topics create` makes them.
    var topics: [(name: String, partitions: Int)] {
        let names = TopicNames(prefix: prefix, tiers: Self.retryTiers.map { RetryTier(name: $0, delay: .seconds(5)) })
        return names.all.map { ($0, $0 == names.deadLetter ? Self.deadLetterPartitions : Self.partitions) }
    }

    /// Starts the mock cluster (with this prefix's topics), or creates the topics on
    /// Tansu with `pushfleet topics create`; either way `topicsCreate` is then run.
    func start(binary: String, directory: String) async throws {
        if kind == .mock {
            let topicFlags = topics.flatMap { ["--topic", "\($0.name):\($0.partitions)"] }
            let process = try FuzzProcess(name: "mock-kafka", binary, ["mock-kafka", "--brokers", "3", "--bootstrap-file", directory + "/bootstrap",
                                                                       "--log-level", "warning"] + topicFlags,
                                          logPath: directory + "/mock-kafka.log", environment: environment)
            mock = process
            let deadline = ContinuousClock.now + .seconds(30)
            while bootstrap.isEmpty, ContinuousClock.now < deadline, process.exited() == nil {
                bootstrap = (try? String(contentsOfFile: directory + "/bootstrap", encoding: .utf8)) ?? ""
                if bootstrap.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            guard !bootstrap.isEmpty else { throw TestFailure("mock-kafka did not start:\n\(process.log.suffix(2000))") }
        }
        // On the mock the topics exist already (its librdkafka 2.0.2 has no CreateTopics): all are found.
        topicsCreate = try await run(binary, [
            "topics", "create", "--bootstrap-servers", bootstrap, "--topic-prefix", prefix,
            "--retry-tiers", Self.retryTiers.joined(separator: ","), "--partitions", "\(Self.partitions)",
            "--dlq-partitions", "\(Self.deadLetterPartitions)", "--replication-factor", "1", "--log-level", "warning",
        ], timeout: .seconds(60))
    }

    func stop() async {
        _ = await mock?.stop(grace: .seconds(5))
    }

    /// Runs a `pushfleet` command against this broker (its environment), with `stdin` from a file.
    func run(_ binary: String, _ arguments: [String], stdin: String? = nil, timeout: Duration) async throws -> TestEnvironment.Run {
        try await TestEnvironment.run(binary, arguments, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// The librdkafka version the drill's processes load (`pushfleet version`).
    func librdkafkaVersion(binary: String) async throws -> String {
        let version = try await run(binary, ["version"], timeout: .seconds(30))
        return version.output.split(separator: "\n").first { $0.hasPrefix("librdkafka ") }.map { String($0.dropFirst(11)) } ?? "?"
    }
}
