import Foundation
import PushKafka
import PushSimulator

/// The local stack a demo ran on (the mock cluster and the simulator), handed
/// to the command after the run so `demo --keep` can leave it up for a person
/// to try the operator commands against; `shutdown` ends it.
final class DemoStack {
    let cluster: KafkaMockCluster
    let simulator: PushSimulator
    /// Where the run's keys, worker config and logs are.
    let directory: String
    let databaseURL: String

    init(cluster: KafkaMockCluster, simulator: PushSimulator, directory: String, databaseURL: String) {
        self.cluster = cluster
        self.simulator = simulator
        self.directory = directory
        self.databaseURL = databaseURL
    }

    /// Lifts the simulator's faults (the providers are back), prints what a
    /// person needs to reach the stack, and waits for SIGINT or SIGTERM.
    func keepUp() async throws {
        try simulator.setScenarios([])
        let config = directory + "/worker.json"
        say("""

            The local stack stays up until Ctrl-C (the simulator's faults are lifted: every provider answers again).
              kafka:      \(cluster.bootstrapServers)
              simulator:  https://127.0.0.1:\(simulator.port) (CA: \(directory)/simulator-ca.pem)
              postgres:   \(databaseURL)
              worker config (keys, topics, database): \(config)
            In another shell:
              export PUSHFLEET_KAFKA_BOOTSTRAP_SERVERS='\(cluster.bootstrapServers)' PUSHFLEET_DATABASE_URL='\(databaseURL)'
              pushfleet status --config \(config)
              pushfleet dlq list
              pushfleet worker --config \(config)
            """)
        await waitForTerminationSignal()
    }

    func shutdown() async {
        try? await simulator.shutdown()
        withExtendedLifetime(cluster) {}
    }
}
