import Foundation
import PushCore
import PushSimulator

/// Faults the demo can inject, and the retry settings that go with them.
struct DemoFaults {
    var apns503First = 0
    var fcmAlways503 = false
    /// FCM answers 503 to everything for this long, then recovers…
    var fcmOutageSeconds: Double?
    /// …starting this many seconds after the steady publishing starts (or,
    /// with everything enqueued first, after the workers start).
    var fcmOutageStartSeconds: Double = 0
    /// The workers' `retry.circuit_breaker.open_ms` (nil: 1 s when a fault is
    /// injected, else the worker's default).
    var circuitOpenMs: Int?
    /// The workers' `retry.circuit_breaker.minimum_requests` (nil: the worker's default).
    var circuitMinimumRequests: Int?
    /// The workers' `worker.max_in_flight` (nil: the worker's default).
    var maxInFlight: Int?
    var retryDelayMs: Int?
    var maxAttempts = 5
    /// Kill, broker-down, PostgreSQL-restart and SIGTERM faults during the run.
    var chaos = false

    var scenarios: [SimulatorScenario] {
        var out: [SimulatorScenario] = []
        if apns503First > 0 {
            out.append(SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil), count: apns503First))
        }
        if fcmAlways503 {
            out.append(SimulatorScenario(provider: "fcm", fault: .httpError(status: 503, retryAfterSeconds: nil)))
        }
        if let fcmOutageSeconds {
            out.append(SimulatorScenario(provider: "fcm", fault: .httpError(status: 503, retryAfterSeconds: nil),
                                         startSeconds: fcmOutageStartSeconds > 0 ? fcmOutageStartSeconds : nil,
                                         durationSeconds: fcmOutageSeconds))
        }
        return out
    }

    /// The worker's `worker` section, when a demo option sets one.
    var workerConfig: JSONValue? {
        maxInFlight.map { .object([("max_in_flight", .int(Int64($0)))]) }
    }

    /// The worker's `retry` section.
    var retryConfig: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("max_attempts", .int(Int64(maxAttempts)))]
        var breaker: [(key: String, value: JSONValue)] = []
        if let ms = circuitOpenMs ?? (scenarios.isEmpty ? nil : 1000) {
            // Injected 5xx trip the provider circuit breakers; unless told otherwise, a demo
            // does not wait out the production 30 s open time per round: circuits re-probe after 1 s.
            breaker.append(("open_ms", .int(Int64(ms))))
        }
        if let n = circuitMinimumRequests { breaker.append(("minimum_requests", .int(Int64(n)))) }
        if !breaker.isEmpty { members.append(("circuit_breaker", .object(breaker))) }
        if let ms = retryDelayMs {
            members.append(("base_delay_ms", .int(Int64(ms))))
            members.append(("tiers", .array(zip(["5s", "1m", "10m"], [1, 2, 4]).map { name, factor in
                .object([("name", .string(name)), ("delay_ms", .int(Int64(ms * factor)))])
            })))
        }
        return .object(members)
    }
}
