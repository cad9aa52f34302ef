import ArgumentParser

/// `pushfleet bench`: the benchmark. `send` drives PushHTTP + PushProviders
/// straight at the simulator's fast sink (optionally next to `h2load`);
/// `pipeline` times the whole path Kafka → worker processes → PostgreSQL;
/// `core` times PushCore alone (decode, translate) for profiling.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark: `send` (HTTP/2 client vs h2load on the same sink), `pipeline` (Kafka → workers → PostgreSQL) and `core` (PushCore alone).",
        subcommands: [BenchSendCommand.self, BenchPipelineCommand.self, BenchCoreCommand.self])
}
