import ArgumentParser
import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushWorker

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

    @Option(name: .long, help: "apns, fcm, webpush or hms.")
    var platform = "apns"

    @Option(name: .long, help: "Approximate request body size in bytes (padded with a custom data key).")
    var payloadBytes = 256

    @Option(name: .long, help: "Event-loop threads of the sink.")
    var sinkThreads = 1

    @Option(name: .long, help: "curl threads (multi handles) of our client, at most one per connection.")
    var loopThreads = 1

    @Flag(name: .long, help: "Also run h2load against the same sink with the same shape.")
    var compareH2load = false

    @Flag(name: .long, help: "Also run the libcurl floor (a minimal C loop over libcurl's multi interface) against the same sink with the same shape, and print our CPU per request as a ratio to its.")
    var floor = false

    @Option(name: .long, help: "With --floor: rounds of (floor, ours), alternating which goes first; medians are reported.")
    var rounds = 1

    @Option(name: .long, help: "Write the figures as JSON to this file.")
    var json: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard notifications > 0, connections > 0, concurrency > 0 else {
            throw ValidationError("--notifications, --connections and --concurrency must be positive")
        }
        if let streams, streams <= 0 { throw ValidationError("--streams must be positive") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
        guard ["apns", "fcm", "webpush", "hms"].contains(platform) else {
            throw ValidationError("--platform must be apns, fcm, webpush or hms")
        }
    }

    func run() async throws {
        let logger = common.makeLogger("pushfleet.bench")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let setup = try BenchSendSetup(provider: platform == "fcm" ? .fcm : .apns, payloadBytes: payloadBytes)
        let sink = try await BenchSink.start(directory: directory, credentials: setup.credentials, threads: sinkThreads)
        let streams = self.streams ?? (concurrency + connections - 1) / connections
        var http: HTTP2Client?
        do {
            var configuration = HTTPClientConfiguration(caBundlePath: sink.caPath, maxConnectionsPerHost: connections)
            configuration.maxConcurrentStreams = streams
            configuration.loopThreads = loopThreads
            let client = try HTTP2Client(configuration: configuration, logger: logger)
            http = client
            let sender: any BenchSending
            switch platform {
            case "webpush": sender = try BenchWebPushSender(sink: sink, http: client, payloadBytes: payloadBytes)
            case "hms": sender = try BenchHMSSender(sink: sink, http: client, payloadBytes: payloadBytes, logger: logger)
            default: sender = try setup.makeSender(http: client, sink: sink, logger: logger)
            }
            let bodyBytes = try await sender.sampleRequest().body.count
            say("sink https://127.0.0.1:\(sink.port) (pid \(sink.process.processIdentifier), fast mode); body \(bodyBytes) bytes; \(platform), \(connections) connections × \(streams) streams")

            let translateNanoseconds = try sender.translationCost(count: min(notifications, 100_000))
            let decodeNanoseconds = try BenchCore().decodeCost(count: min(notifications, 100_000))
            // Warm-up: connections, TLS, provider token; not measured.
            _ = await BenchLoad.run(count: min(notifications, max(1000, concurrency * 4)), concurrency: concurrency, send: { try await sender.send($0) })
            // Rounds alternate which of (floor, ours) goes first, so a drift in
            // the machine's speed during the run does not favour either.
            var ours: [BenchSendRound] = []
            var floors: [BenchFloor] = []
            for round in 0..<(floor ? rounds : 1) {
                if floor && round % 2 == 0 { floors.append(try await runFloor(sink: sink, sender: sender, streams: streams)) }
                let cpu0 = BenchUsage.selfCPUSeconds(), sink0 = sink.cpuSeconds(), roles0 = ThreadCPU.sample()?.byRole ?? [:]
                let result = await BenchLoad.run(count: notifications, concurrency: concurrency, send: { try await sender.send($0) })
                ours.append(BenchSendRound(result: result, cpuSeconds: BenchUsage.selfCPUSeconds() - cpu0, sinkCPUSeconds: sink.cpuSeconds() - sink0,
                                           threadRoles: BenchUsage.difference(ThreadCPU.sample()?.byRole ?? [:], roles0)))
                if floor && round % 2 == 1 { floors.append(try await runFloor(sink: sink, sender: sender, streams: streams)) }
            }
            let median = ours.sorted { $0.cpuSeconds < $1.cpuSeconds }[ours.count / 2]
            let result = median.result
            let cpu = median.cpuSeconds, sinkCPU = median.sinkCPUSeconds

            var report = BenchReport()
            report.add("mode", "mode", text: "send")
            report.add("machine", "machine", text: BenchUsage.machine())
            report.add("platform", "platform", text: platform)
            report.add("notifications", "notifications", notifications)
            if floor { report.add("rounds", "rounds (median shown)", rounds) }
            report.add("connections", "connections", connections)
            report.add("loop_threads", "curl threads", min(loopThreads, connections))
            report.add("concurrency", "concurrency (in flight)", concurrency)
            report.add("streams_per_connection", "streams per connection (on the wire at most)", streams)
            report.add("body_bytes", "request body bytes", bodyBytes)
            report.add("succeeded", "succeeded (2xx)", result.succeeded)
            report.add("failed", "failed (transport or non-2xx)", result.failed + result.otherStatus.values.reduce(0, +))
            report.add("seconds", "wall time", result.seconds, "%.3f", unit: "s")
            let rate = Double(notifications) / result.seconds
            report.add("rate_per_second", "throughput", rate, "%.0f", unit: "notifications/s")
            report.add(latency: result.latency, key: "latency", label: "latency")
            report.add("cpu_seconds_per_100k", "our CPU per 100k", cpu * 100_000 / Double(notifications), "%.3f", unit: "s")
            report.add("cpu_cores", "our CPU (cores busy)", cpu / result.seconds, "%.2f")
            report.add("us_per_request", "our CPU per request" + (floor ? " (the median round)" : ""), cpu * 1e6 / Double(notifications), "%.1f", unit: "µs")
            report.add(threadRoles: median.threadRoles, keyPrefix: "us_per_request_", count: notifications)
            report.add("translate_ns", platform == "webpush" ? "translation and encryption alone (per request)" : "translation alone (per request)",
                       translateNanoseconds, "%.0f", unit: "ns")
            report.add("decode_ns", "intake decode alone (PushCore, per message)", decodeNanoseconds, "%.0f", unit: "ns")
            report.add("peak_rss_mb", "our peak RSS (VmHWM)", megabytes(BenchUsage.peakRSSBytes()), "%.1f", unit: "MB")
            report.add("sink_cpu_seconds", "sink CPU", sinkCPU, "%.3f", unit: "s")
            report.add("sink_cpu_cores", "sink CPU (cores busy)", sinkCPU / result.seconds, "%.2f")
            if let error = result.firstError { report.warn("first failure: \(error)") }
            if !result.otherStatus.isEmpty { report.warn("non-2xx answers: \(result.otherStatus)") }
            if sinkCPU / result.seconds > 0.85 * Double(sinkThreads) {
                report.warn("the sink used ≈ \(sinkThreads) full core(s): it may be the bottleneck of our run")
            }
            if floor {
                BenchSendRound.addFloor(floors, ours: ours, notifications: notifications, to: &report)
            }
            if compareH2load {
                let h2 = try await BenchH2load.run(
                    sink: sink, request: try await sender.sampleRequest(), directory: directory,
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

    private func runFloor(sink: BenchSink, sender: any BenchSending, streams: Int) async throws -> BenchFloor {
        try await BenchFloor.run(
            sink: sink, request: try await sender.sampleRequest(), count: notifications,
            warmup: min(notifications, max(1000, concurrency * 4)),
            connections: connections, streams: streams, inFlight: concurrency)
    }
}

/// One measured run of our client in `bench send`.
struct BenchSendRound {
    var result: BenchLoad.Result
    var cpuSeconds: Double
    var sinkCPUSeconds: Double
    /// Our CPU seconds in the run by thread role (`ThreadCPU.Sample.byRole`).
    var threadRoles: [String: Double] = [:]

    /// The floor's figures (medians over the rounds) and our CPU per request as a ratio to the floor's.
    static func addFloor(_ floors: [BenchFloor], ours: [BenchSendRound], notifications: Int, to report: inout BenchReport) {
        guard !floors.isEmpty else { return }
        let floor = floors.sorted { $0.microsecondsPerRequest < $1.microsecondsPerRequest }[floors.count / 2]
        let ourMicroseconds = ours.map { $0.cpuSeconds * 1e6 / Double(notifications) }.sorted()
        let our = ourMicroseconds[ourMicroseconds.count / 2]
        report.add("floor_rate_per_second", "libcurl floor throughput", floor.rate, "%.0f", unit: "req/s")
        report.add("floor_failed", "libcurl floor failed", floor.failed)
        report.add("floor_us_per_request", "libcurl floor CPU per request", floor.microsecondsPerRequest, "%.1f", unit: "µs")
        report.add("our_us_per_request", "our CPU per request", our, "%.1f", unit: "µs")
        report.add("floor_sink_cpu_seconds", "sink CPU under the floor", floor.sinkCPUSeconds, "%.3f", unit: "s")
        report.add("ratio_to_floor", "our CPU per request / the floor's", our / floor.microsecondsPerRequest, "%.3f", unit: "×")
        if floors.count > 1 {
            let pairs = zip(ours, floors).map { String(format: "%.1f/%.1f", $0.cpuSeconds * 1e6 / Double(notifications), $1.microsecondsPerRequest) }
            report.add("rounds_us_ours_floor", "each round, µs ours/floor", text: pairs.joined(separator: " "))
        }
        if floor.failed > 0 { report.warn("the libcurl floor saw \(floor.failed) failed requests") }
    }
}
