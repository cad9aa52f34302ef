import Foundation
import PushCore
import PushThreads

/// Closed-loop load: `count` requests with `concurrency` always in flight,
/// each request timed into an HdrHistogram.
struct BenchLoad {
    struct Result {
        var latency = BenchLatency()
        var succeeded = 0
        var otherStatus: [Int: Int] = [:]
        var failed = 0
        var firstError: String?
        var seconds = 0.0
    }

    /// Runs `send(i)` for i in 0..<count; `send` returns the HTTP status or throws.
    /// As the worker's batches send: on the send executor (`SerialTaskExecutor`).
    static func run(count: Int, concurrency: Int, send: @escaping @Sendable (Int) async throws -> Int) async -> Result {
        let start = ContinuousClock.now
        var result = await withTaskExecutorPreference(SerialTaskExecutor.sends) {
            await load(count: count, concurrency: concurrency, send: send)
        }
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    private static func load(count: Int, concurrency: Int, send: @escaping @Sendable (Int) async throws -> Int) async -> Result {
        var result = Result()
        await withTaskGroup(of: (Duration, Swift.Result<Int, any Error>).self) { group in
            var next = 0
            func launch() {
                let i = next
                next += 1
                group.addTask {
                    let started = ContinuousClock.now
                    do {
                        let status = try await send(i)
                        return (ContinuousClock.now - started, .success(status))
                    } catch {
                        return (ContinuousClock.now - started, .failure(error))
                    }
                }
            }
            while next < min(count, concurrency) { launch() }
            while let item = await group.next() {
                let (elapsed, outcome) = item
                result.latency.record(elapsed)
                switch outcome {
                case .success(let status) where (200..<300).contains(status): result.succeeded += 1
                case .success(let status): result.otherStatus[status, default: 0] += 1
                case .failure(let error):
                    result.failed += 1
                    if result.firstError == nil { result.firstError = "\(error)" }
                }
                if next < count { launch() }
            }
        }
        return result
    }
}
