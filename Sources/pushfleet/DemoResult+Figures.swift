import Foundation
import PushCore

extension DemoResult {
    /// The figures of a steady run: latency per phase, the backlog's drain,
    /// deliveries by app, the workers' quota shares.
    func printFigures() {
        func table(_ title: String, _ rows: [DemoLatency]) {
            guard !rows.isEmpty else { return }
            say("")
            say(title)
            say("phase               platform   deliveries  accepted   p50 s     p99 s     max s")
            for r in rows {
                func s(_ v: Double?) -> String { (v.map { String(format: "%.3f", $0) } ?? "-").padding(toLength: 10, withPad: " ", startingAt: 0) }
                say(r.phase.padding(toLength: 20, withPad: " ", startingAt: 0) + r.platform.padding(toLength: 11, withPad: " ", startingAt: 0)
                      + "\(r.deliveries)".padding(toLength: 12, withPad: " ", startingAt: 0) + "\(r.accepted)".padding(toLength: 11, withPad: " ", startingAt: 0)
                      + s(r.p50) + s(r.p99) + s(r.max))
            }
        }
        table("Enqueue → accepted around the FCM outage (phase by enqueue time; from the ledger):", outageLatencies)
        table("Enqueue → accepted of the interactive lane with the bulk backlog draining and alone, and of the backlog:", laneLatencies)
        if let drain {
            let share = drain.withInteractive.flatMap { with in drain.alone.map { with / $0 * 100 } }
            say(String(format: "bulk backlog drain rate: %@ deliveries/s beside interactive traffic, %@ alone%@",
                       drain.withInteractive.map { String(format: "%.0f", $0) } ?? "-", drain.alone.map { String(format: "%.0f", $0) } ?? "-",
                       share.map { String(format: " (%.0f %%)", $0) } ?? " (the backlog drained before the interactive traffic ended: use a bigger --bulk-backlog)"))
        }
        table("Enqueue → accepted of the demo app's iOS deliveries alone and beside the refused-key app's traffic:", refusedKeyLatencies)
        if Set(byApp.keys.map { $0.prefix { $0 != "|" } }).count > 1 {
            say("")
            say("Deliveries by app, platform and status:")
            for (key, n) in byApp.sorted(by: { $0.key < $1.key }) {
                let parts = key.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                let widths = [24, 10, 16]
                say("  " + zip(parts, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined() + "\(n)")
            }
        }
        if !quotaShares.isEmpty {
            say("")
            say("fleet quota share per worker: " + quotaShares.sorted { $0.key < $1.key }.map { String(format: "%@ %.3f", $0.key, $0.value) }.joined(separator: ", ")
                  + String(format: " (sum %.3f)", quotaShares.values.reduce(0, +)))
        }
    }

    /// The steady run's figures, for the summary.
    func figuresJSON() -> [(key: String, value: JSONValue)] {
        let drainRates: JSONValue = .object([("with_interactive", drain?.withInteractive.map { .double($0) } ?? .null),
                                             ("alone", drain?.alone.map { .double($0) } ?? .null)])
        let shares: JSONValue = .object(quotaShares.sorted { $0.key < $1.key }.map { ($0.key, .double($0.value)) })
        let twice = acceptedTwice
        return [
            ("outage_latency", .array(outageLatencies.map { $0.json() })),
            ("lane_latency", .array(laneLatencies.map { $0.json() })),
            ("refused_key_latency", .array(refusedKeyLatencies.map { $0.json() })),
            ("bulk_drain_per_second", drainRates),
            ("parked_messages", .int(Int64(parked.messages))),
            ("parked_held_deliveries", .int(Int64(parked.heldDeliveries))),
            ("parked_max_per_delivery", .int(Int64(parked.maxPerDelivery))),
            ("parked_unreadable", .int(Int64(parked.unreadable))),
            ("by_app", Self.counts(byApp)),
            ("quota_shares", shares),
            ("timeline", timeline?.json() ?? .null),
            ("apns_accepted_twice", twice.map { .int(Int64($0.apns)) } ?? .null),
            ("fcm_accepted_twice", twice.map { .int(Int64($0.fcm)) } ?? .null),
        ]
    }
}
