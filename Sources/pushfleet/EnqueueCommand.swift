import ArgumentParser
import Foundation
import PushCore
import PushProducer

struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Publish notifications to a lane's intake topic: each FILE is one JSON notification; with no FILE, each stdin line is one.")

    @Option(name: .long, help: "Kafka bootstrap servers (env PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    @Option(name: .long, help: "Topic prefix: publishes to <prefix>.notifications (the bulk lane: <prefix>.notifications.bulk).")
    var topicPrefix = TopicNames.defaultPrefix

    @Option(name: .long, help: "The lane: interactive (transactional, one-time codes, chat) or bulk (campaigns, served with what interactive traffic leaves).")
    var lane: Lane = .interactive

    @Option(name: .long, help: "Publish to this topic instead of the lane's intake (e.g. seed <prefix>.dlq in a test).")
    var topic: String?

    @Flag(name: .long, help: "Publish messages that fail validation too (to exercise rejection paths).")
    var allowInvalid = false

    @Argument(help: "JSON files, one notification each.")
    var files: [String] = []

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.enqueue")
        guard let servers = bootstrapServers ?? ProcessInfo.processInfo.environment["PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CommandFailure("no Kafka: pass --bootstrap-servers or set PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS")
        }
        var messages: [(source: String, bytes: [UInt8])] = []
        if files.isEmpty {
            var lineNumber = 0
            while let line = readLine(strippingNewline: true) {
                lineNumber += 1
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                messages.append(("stdin:\(lineNumber)", Array(line.utf8)))
            }
        } else {
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read \(file)") }
                messages.append((file, Array(data)))
            }
        }
        let publisher = try NotificationPublisher(bootstrapServers: servers, topicPrefix: topicPrefix, lane: lane, topic: topic,
                                                  logger: logger)
        var published = 0
        var refused = 0
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for message in messages {
                    let decoded = PushNotification.decode(message.bytes)
                    var key: [UInt8]?
                    switch decoded {
                    case .success(let n): key = Array(n.partitionKey.utf8)
                    case .failure(let error):
                        guard allowInvalid else {
                            FileHandle.standardError.write(Data("\(message.source): not published: \(error)\n".utf8))
                            refused += 1
                            continue
                        }
                    }
                    let bytes = message.bytes
                    group.addTask { try await publisher.publishRaw(bytes, key: key) }
                    published += 1
                }
                try await group.waitForAll()
            }
        } catch {
            await publisher.close()
            throw error
        }
        await publisher.close()
        say("published \(published) to \(publisher.topic)" + (refused > 0 ? ", refused \(refused) invalid" : ""))
        if refused > 0 { throw ExitCode(65) }
    }
}

extension Lane: ExpressibleByArgument {}
