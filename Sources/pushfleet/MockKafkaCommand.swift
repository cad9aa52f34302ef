import ArgumentParser
import Foundation
import PushCore
import PushKafka

struct MockKafkaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock-kafka",
        abstract: "Run librdkafka's mock cluster as a local multi-broker Kafka (dev and tests). Prints the bootstrap servers; stops on SIGTERM/SIGINT.")

    @Option(name: .long, help: "Number of brokers.")
    var brokers = 3

    @Option(name: .long, help: "Topics to create, as name:partitions (repeatable).")
    var topic: [String] = Self.fleetTopics

    /// The fleet's topics with the default prefix and tiers: the intake with 6 partitions, the rest with 3.
    static var fleetTopics: [String] {
        let names = TopicNames()
        return ["\(names.intake):6"] + (names.retryTopics + [names.deadLetter, names.devices, names.receipts]).map { "\($0):3" }
    }

    @Option(name: .long, help: "Write the bootstrap servers to this file once ready.")
    var bootstrapFile: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.mock-kafka")
        let cluster = try KafkaMockCluster(brokers: brokers, logger: logger)
        for spec in topic {
            let parts = spec.split(separator: ":")
            guard parts.count == 2, let partitions = Int32(parts[1]), partitions > 0 else {
                throw CommandFailure("--topic \(spec): expected name:partitions")
            }
            try cluster.createTopic(String(parts[0]), partitions: partitions)
        }
        say(cluster.bootstrapServers)
        if let bootstrapFile {
            try Data(cluster.bootstrapServers.utf8).write(to: URL(fileURLWithPath: bootstrapFile), options: .atomic)
        }
        await waitForTerminationSignal()
        withExtendedLifetime(cluster) {}
    }
}

/// Suspends until SIGTERM or SIGINT.
func waitForTerminationSignal() async {
    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let queue = DispatchQueue(label: "pushfleet.signals")
        let once = SignalOnce(continuation)
        for sig in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { once.fire() }
            source.resume()
            once.keep(source)
        }
    }
}

/// Resumes a continuation once, whichever signal comes first.
private final class SignalOnce: @unchecked Sendable {
    // Safe: `fired` and `sources` are only touched on the one serial signal queue (and in init).
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
    func fire() {
        continuation?.resume()
        continuation = nil
    }
}
