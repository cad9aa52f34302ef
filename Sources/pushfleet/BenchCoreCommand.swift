import ArgumentParser
import Foundation

/// `pushfleet bench core`: PushCore's per-message CPU without any server:
/// intake decode alone, and decode + translate, timed on one thread. Run it
/// under `valgrind --tool=callgrind` for instruction counts.
struct BenchCoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core",
        abstract: "Time PushCore alone: intake decode, and decode + APNs translation, per message (no servers).")

    @Option(name: .long, help: "Messages to decode (and to decode and translate).")
    var messages = 100_000

    @Option(name: .long, help: "Write the figures as JSON to this file.")
    var json: String?

    func validate() throws {
        guard messages > 0 else { throw ValidationError("--messages must be positive") }
    }

    func run() throws {
        let core = BenchCore()
        // Warm-up (caches, lazily created statics); not measured.
        _ = try core.decodeAndTranslateLoop(count: min(messages, 1000))
        let decode = try core.decodeCost(count: messages)
        let both = try core.decodeAndTranslateCost(count: messages)
        var report = BenchReport()
        report.add("mode", "mode", text: "core")
        report.add("machine", "machine", text: BenchUsage.machine())
        report.add("messages", "messages", messages)
        report.add("message_bytes", "intake message bytes", core.messages[0].count)
        report.add("decode_ns", "intake decode alone (per message)", decode, "%.0f", unit: "ns")
        report.add("decode_translate_ns", "decode + APNs translation (per message)", both, "%.0f", unit: "ns")
        report.add("translate_ns", "translation alone (difference)", both - decode, "%.0f", unit: "ns")
        print(report.table(title: "pushfleet bench core"))
        if let json { try report.writeJSON(to: json) }
    }
}
