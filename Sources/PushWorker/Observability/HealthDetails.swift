import Foundation
import PushCore

/// What the health JSON says beyond readiness: each lane's lag, each
/// provider client's state, and the ledger's unfinished backlog. Readiness
/// stays about the worker itself (a provider's outage does not make a worker
/// unready: restarting it would help nothing); these say what it faces.
public struct HealthDetails: Sendable, Equatable {
    /// One provider client (an app's client of a provider; Web Push: per push service).
    public struct Provider: Sendable, Equatable {
        public var provider: PushCore.Provider
        public var app: String
        public var host: String
        /// `closed`, `half_open` or `open`.
        public var circuit: String
        /// Seconds since the provider last answered a request with a 2xx (nil: never).
        public var lastSuccessSecondsAgo: Double?
        /// Failed share of the requests the circuit breaker counts in its window now
        /// (nil: none counted, as while the circuit is open).
        public var errorShare: Double?

        public init(provider: PushCore.Provider, app: String, host: String, circuit: String,
                    lastSuccessSecondsAgo: Double?, errorShare: Double?) {
            self.provider = provider
            self.app = app
            self.host = host
            self.circuit = circuit
            self.lastSuccessSecondsAgo = lastSuccessSecondsAgo
            self.errorShare = errorShare
        }
    }

    /// Messages behind, per lane, over the partitions this worker owns.
    public var laneLag: [Lane: Int64] = [:]
    public var providers: [Provider] = []
    /// Deliveries not final in the ledger, per status (`pending`, `retrying`,
    /// `parked`): fleet-wide, as PostgreSQL last said.
    public var unfinished: [String: Int] = [:]
    /// Seconds since the `created_at` of the oldest unfinished delivery.
    public var oldestUnfinishedSeconds: Double?

    public init() {}

    /// The `"lanes"`, `"providers"` and `"backlog"` members of the health JSON.
    func jsonMembers() -> String {
        func number(_ value: Double?) -> String {
            guard let value, value.isFinite else { return "null" }
            return String((value * 10).rounded() / 10)
        }
        func string(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default: out += scalar.value < 0x20 ? String(format: "\\u%04x", scalar.value) : String(scalar)
                }
            }
            return out + "\""
        }
        let lanes = Lane.allCases.map { "\"\($0.rawValue)\":{\"lag\":\(laneLag[$0] ?? 0)}" }.joined(separator: ",")
        let clients = providers.map { p in
            "{\"provider\":\"\(p.provider.rawValue)\",\"app\":\(string(p.app)),\"host\":\(string(p.host)),"
                + "\"circuit\":\"\(p.circuit)\",\"last_success_seconds_ago\":\(number(p.lastSuccessSecondsAgo)),"
                + "\"error_share\":\(p.errorShare.map { String(($0 * 1000).rounded() / 1000) } ?? "null")}"
        }.joined(separator: ",")
        let statuses = unfinished.sorted { $0.key < $1.key }.map { "\(string($0.key)):\($0.value)" }.joined(separator: ",")
        return "\"lanes\":{\(lanes)},\"providers\":[\(clients)],"
            + "\"backlog\":{\"unfinished\":{\(statuses)},\"oldest_unfinished_seconds\":\(number(oldestUnfinishedSeconds))}"
    }
}
