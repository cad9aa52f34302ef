import ArgumentParser
import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator

/// `pushfleet bench send`: PushHTTP + PushProviders at the simulator's fast
/// sink, translating every notification as a worker does, with an optional
/// `h2load` run against the same sink for comparison.
struct BenchSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send N notifications through the APNs/FCM client at a fast sink (optionally compared with h2load).")

    @Option(name: .long, help: "Notifications to send.")
    var notifications = 100_000

    @Option(name: .long, help: "HTTP/2 connections to the sink (h2load -c).")
    var connections = 2

    @Option(name: .long, help: "Requests in flight in total (h2load -m is this divided by the connections).")
    var concurrency = 100

    @Option(name: .long, help: ArgumentHelp(
        "Streams per connection our client uses at most (h2load -m); the rest of --concurrency waits in the client's per-host queue, as in the worker. Default: concurrency / connections."))
    var streams: Int?

    @Option(name: .long, help: "apns or fcm.")
    var platform = "apns"

    @Option(name: .long, help: "Approximate request body size in bytes (padded with a custom data key).")
    var payloadBytes = 256

    @Option(name: .long, help: "Event-loop threads of the sink.")
    var sinkThreads = 1

    @Option(name: .long, help: "curl threads (multi handles) of our client, at most one per connection.")
    var loopThreads = 1

    @Flag(name: .long, help: "Also run h2load against the same sink with the same shape.")
    var compareH2load = false

    @Option(name: .long, help: "Write the figures as JSON to this file.")
    var json: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard notifications > 0, connections > 0, concurrency > 0 else {
            throw ValidationError("--notifications, --connections and --concurrency must be positive")
        }
        if let streams, streams <= 0 { throw ValidationError("--streams must be positive") }
        guard platform == "apns" || platform == "fcm" else { throw ValidationError("--platform must be apns or fcm") }
    }

    func run() async throws {
        let logger = common.makeLogger("pushfleet.bench")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let setup = try BenchSendSetup(provider: platform == "apns" ? .apns : .fcm, payloadBytes: payloadBytes)
        let sink = try await BenchSink.start(directory: directory, credentials: setup.credentials, threads: sinkThreads)
        let streams = self.streams ?? (concurrency + connections - 1) / connections
        var http: HTTP2Client?
        do {
            var configuration = HTTPClientConfiguration(caBundlePath: sink.caPath, maxConnectionsPerHost: connections)
            configuration.maxConcurrentStreams = streams
            configuration.loopThreads = loopThreads
            let client = try HTTP2Client(configuration: configuration, logger: logger)
            http = client
            let sender = try setup.makeSender(http: client, sink: sink, logger: logger)
            say("sink https://127.0.0.1:\(sink.port) (pid \(sink.process.processIdentifier), fast mode); body \(setup.bodyBytes) bytes; \(platform), \(connections) connections × \(streams) streams")

            let translateNanoseconds = try sender.translationCost(count: min(notifications, 100_000))
            let decodeNanoseconds = try BenchCore().decodeCost(count: min(notifications, 100_000))
            // Warm-up: connections, TLS, provider token; not measured.
            _ = await BenchLoad.run(count: min(notifications, max(1000, concurrency * 4)), concurrency: concurrency, send: { try await sender.send($0) })
            let cpu0 = BenchUsage.selfCPUSeconds(), sink0 = sink.cpuSeconds()
            let result = await BenchLoad.run(count: notifications, concurrency: concurrency, send: { try await sender.send($0) })
            let cpu1 = BenchUsage.selfCPUSeconds(), sink1 = sink.cpuSeconds()

            var report = BenchReport()
            report.add("mode", "mode", text: "send")
            report.add("platform", "platform", text: platform)
            report.add("notifications", "notifications", notifications)
            report.add("connections", "connections", connections)
            report.add("loop_threads", "curl threads", min(loopThreads, connections))
            report.add("concurrency", "concurrency (in flight)", concurrency)
            report.add("streams_per_connection", "streams per connection (on the wire at most)", streams)
            report.add("body_bytes", "request body bytes", setup.bodyBytes)
            report.add("succeeded", "succeeded (2xx)", result.succeeded)
            report.add("failed", "failed (transport or non-2xx)", result.failed + result.otherStatus.values.reduce(0, +))
            report.add("seconds", "wall time", result.seconds, "%.3f", unit: "s")
            let rate = Double(notifications) / result.seconds
            report.add("rate_per_second", "throughput", rate, "%.0f", unit: "notifications/s")
            report.add(latency: result.latency, key: "latency", label: "latency")
            report.add("cpu_seconds_per_100k", "our CPU per 100k", (cpu1 - cpu0) * 100_000 / Double(notifications), "%.3f", unit: "s")
            report.add("cpu_cores", "our CPU (cores busy)", (cpu1 - cpu0) / result.seconds, "%.2f")
            report.add("translate_ns", "translation alone (PushCore, per request)", translateNanoseconds, "%.0f", unit: "ns")
            report.add("decode_ns", "intake decode alone (PushCore, per message)", decodeNanoseconds, "%.0f", unit: "ns")
            report.add("peak_rss_mb", "our peak RSS (VmHWM)", megabytes(BenchUsage.peakRSSBytes()), "%.1f", unit: "MB")
            report.add("sink_cpu_seconds", "sink CPU", sink1 - sink0, "%.3f", unit: "s")
            report.add("sink_cpu_cores", "sink CPU (cores busy)", (sink1 - sink0) / result.seconds, "%.2f")
            if let error = result.firstError { report.warn("first failure: \(error)") }
            if !result.otherStatus.isEmpty { report.warn("non-2xx answers: \(result.otherStatus)") }
            if (sink1 - sink0) / result.seconds > 0.85 * Double(sinkThreads) {
                report.warn("the sink used ≈ \(sinkThreads) full core(s): it may be the bottleneck of our run")
            }
            if compareH2load {
                let h2 = try await BenchH2load.run(
                    sink: sink, request: try await sender.h2loadRequest(), directory: directory,
                    count: notifications, connections: connections, streams: streams)
                h2.add(to: &report, ourRate: rate, sinkThreads: sinkThreads)
            }
            say(report.table(title: "pushfleet bench send"))
            if let json { try report.writeJSON(to: json) }
        } catch {
            http?.shutdown()
            await sink.stop()
            throw error
        }
        http?.shutdown()
        await sink.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
