import Foundation
import PushCore

/// One `h2load` run (Debian's nghttp2-client) against the bench sink with
/// the same connections, streams per connection, headers and body as ours.
struct BenchH2load {
    var rate: Double
    var seconds: Double
    var succeeded: Int
    var sinkCPUSeconds: Double
    var h2loadCPUSeconds: Double
    var commandLine: String

    static func run(sink: BenchSink, request: BenchRequestShape, directory: String,
                    count: Int, connections: Int, streams: Int) async throws -> BenchH2load {
        let bodyPath = directory + "/h2load-body.json"
        let outPath = directory + "/h2load.out"
        try Data(request.body).write(to: URL(fileURLWithPath: bodyPath))
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        var arguments = ["-n", "\(count)", "-c", "\(connections)", "-m", "\(streams)", "-t", "1", "-d", bodyPath]
        for header in request.headers { arguments += ["-H", "\(header.name): \(header.value)"] }
        arguments.append(sink.baseURL + request.path)
        guard let path = Self.which("h2load") else {
            throw CommandFailure("h2load not found on PATH (Debian package nghttp2-client; scripts/install-deps.sh installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardOutput = out
        process.standardError = out
        let children0 = BenchUsage.childrenCPUSeconds(), sink0 = sink.cpuSeconds()
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        let children1 = BenchUsage.childrenCPUSeconds(), sink1 = sink.cpuSeconds()
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0, let finished = Self.parseFinished(text) else {
            throw CommandFailure("h2load failed (exit \(process.terminationStatus)):\n\(text.suffix(2000))")
        }
        return BenchH2load(
            rate: finished.rate, seconds: finished.seconds, succeeded: Self.parseSucceeded(text) ?? 0,
            sinkCPUSeconds: sink1 - sink0, h2loadCPUSeconds: children1 - children0,
            commandLine: "h2load " + arguments.map { $0.contains(" ") ? "'\($0.prefix(60))…'" : $0 }.joined(separator: " "))
    }

    /// `finished in 1.23s, 81234.56 req/s, 31.25MB/s` → (1.23, 81234.56).
    static func parseFinished(_ text: String) -> (seconds: Double, rate: Double)? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in ") }) else { return nil }
        let parts = line.dropFirst("finished in ".count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count >= 2 else { return nil }
        var secondsText = parts[0]
        var scale = 1.0
        if secondsText.hasSuffix("ms") { secondsText.removeLast(2); scale = 0.001 } else if secondsText.hasSuffix("s") { secondsText.removeLast() }
        guard let seconds = Double(secondsText),
              let rate = Double(parts[1].replacingOccurrences(of: " req/s", with: "")) else { return nil }
        return (seconds * scale, rate)
    }

    /// `requests: N total, N started, N done, N succeeded, …` → succeeded.
    static func parseSucceeded(_ text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("requests: ") }) else { return nil }
        let part = line.split(separator: ",").first { $0.hasSuffix(" succeeded") }
        return part.flatMap { Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) }
    }

    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func add(to report: inout BenchReport, ourRate: Double, sinkThreads: Int) {
        report.add("h2load_rate_per_second", "h2load throughput", rate, "%.0f", unit: "req/s")
        report.add("h2load_succeeded", "h2load succeeded", succeeded)
        report.add("h2load_cpu_seconds", "h2load CPU", h2loadCPUSeconds, "%.3f", unit: "s")
        report.add("h2load_sink_cpu_seconds", "sink CPU under h2load", sinkCPUSeconds, "%.3f", unit: "s")
        let sinkCores = sinkCPUSeconds / max(seconds, 0.001)
        report.add("h2load_sink_cpu_cores", "sink CPU under h2load (cores busy)", sinkCores, "%.2f")
        report.add("ratio_to_h2load", "our rate / h2load rate", ourRate / rate, "%.2f", unit: "×")
        if sinkCores > 0.85 * Double(sinkThreads) {
            report.warn("the sink used ≈ \(sinkThreads) full core(s) under h2load: h2load's rate is the sink's capacity, not h2load's")
        }
        if rate < ourRate * 1.2 {
            report.warn("h2load is not well above our rate: the sink (or the shared 2 cores) limits both runs")
        }
    }
}
