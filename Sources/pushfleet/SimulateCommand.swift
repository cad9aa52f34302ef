import ArgumentParser
import Foundation
import PushSimulator

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the APNs, FCM, Web Push and Push Kit simulator with their token endpoints (TLS, HTTP/2). Prints its port; stops on SIGTERM/SIGINT.")

    @Option(name: .long, help: "Simulator configuration (JSON): keys, accounts, dead tokens, TLS, fast mode.")
    var config: String?

    @Option(name: .long, help: "Port (0 = any free port; overrides the file).")
    var port: Int?

    @Flag(name: .long, help: "Answer 200 to every request without checks (benchmark sink).")
    var fast = false

    @Option(name: .long, help: "Write the CA certificate clients must trust to this file.")
    var caOut: String?

    @Option(name: .long, help: "On SIGTERM/SIGINT, write what the simulator answered (SimulatorStats, e.g. APNs sends per apns-id) as JSON here before stopping.")
    var statsJSON: String?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger("pushfleet.simulate")
        var configuration = try config.map { try SimulatorConfiguration.load(fromJSONFile: $0) } ?? SimulatorConfiguration()
        if let port { configuration.port = port }
        if fast { configuration.fastMode = true }
        let simulator = PushSimulator(configuration: configuration, logger: logger)
        try await simulator.start()
        if let caOut {
            try Data(simulator.caCertificatePEM.utf8).write(to: URL(fileURLWithPath: caOut), options: .atomic)
        }
        say("simulator listening on https://\(configuration.host):\(simulator.port) (token endpoint \(simulator.tokenURI))")
        await waitForTerminationSignal()
        if let statsJSON {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(simulator.stats()).write(to: URL(fileURLWithPath: statsJSON), options: .atomic)
        }
        try await simulator.shutdown()
    }
}
