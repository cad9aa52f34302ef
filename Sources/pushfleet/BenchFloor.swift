import CCurlFloor
import Foundation
import PushCore
import PushThreads

/// The libcurl floor: a minimal C loop over libcurl's multi interface
/// (`CCurlFloor_run`, Sources/CCurlFloor/curl_floor.c) sending the same
/// request shape as ours to the same sink with the same connections and
/// streams, so every `bench send --floor` prints how far we are from
/// libcurl's own cost per request.
struct BenchFloor {
    var succeeded: Int
    var failed: Int
    var seconds: Double
    var cpuSeconds: Double
    var sinkCPUSeconds: Double

    var rate: Double { Double(succeeded + failed) / max(seconds, 1e-9) }
    var microsecondsPerRequest: Double { cpuSeconds * 1e6 / Double(max(succeeded + failed, 1)) }

    /// Runs the loop on a thread of its own (it blocks), `warmup` requests
    /// unmeasured on fresh connections, then `count` measured.
    static func run(sink: BenchSink, request: BenchRequestShape, count: Int, warmup: Int,
                    connections: Int, streams: Int, inFlight: Int) async throws -> BenchFloor {
        let url = sink.baseURL + request.path
        let lines = request.headers.map { "\($0.name): \($0.value)" }
        let body = request.body
        let ca = sink.caPath
        let sink0 = sink.cpuSeconds()
        let result: CCurlFloor_result = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                ThreadName.setCurrent("floor")
                var result = CCurlFloor_result()
                let code = withCStrings(lines) { headerPointers in
                    body.withUnsafeBufferPointer { bodyBuffer in
                        bodyBuffer.withMemoryRebound(to: CChar.self) { chars in
                            CCurlFloor_run(
                                url, headerPointers.baseAddress, Int32(headerPointers.count),
                                chars.baseAddress, chars.count, count, warmup,
                                connections, streams, inFlight, ca, &result)
                        }
                    }
                }
                if code == 0 {
                    continuation.resume(returning: result)
                } else {
                    let message = withUnsafeBytes(of: result.error) { raw in
                        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                    }
                    continuation.resume(throwing: CommandFailure("libcurl floor loop: \(message)"))
                }
            }
            thread.name = "bench-floor"
            thread.start()
        }
        return BenchFloor(
            succeeded: result.succeeded, failed: result.failed, seconds: result.seconds,
            cpuSeconds: result.cpu_seconds, sinkCPUSeconds: sink.cpuSeconds() - sink0)
    }

    /// Calls `body` with a C array of C strings for `strings`, valid during the call.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        let owned = strings.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = owned.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer(body)
    }
}
