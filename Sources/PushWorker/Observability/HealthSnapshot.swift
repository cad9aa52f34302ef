import Foundation

/// Health at one instant; pure, so the rules are testable on their own.
public struct HealthSnapshot: Sendable, Equatable {
    public var partitionsAssigned: Int
    public var postgresReachable: Bool
    /// Time since the last poll-loop heartbeat (or since start).
    public var sinceLastBeat: Duration
    public var livenessWindow: Duration
    /// Draining for shutdown.
    public var stopping: Bool
    /// Lanes, providers and backlog: reported, never part of readiness.
    public var details = HealthDetails()

    public init(partitionsAssigned: Int, postgresReachable: Bool, sinceLastBeat: Duration, livenessWindow: Duration,
                stopping: Bool = false) {
        self.partitionsAssigned = partitionsAssigned
        self.postgresReachable = postgresReachable
        self.sinceLastBeat = sinceLastBeat
        self.livenessWindow = livenessWindow
        self.stopping = stopping
    }

    public var live: Bool { sinceLastBeat <= livenessWindow }
    public var ready: Bool { live && !stopping && partitionsAssigned > 0 && postgresReachable }

    /// The JSON body of `/health/live` and `/health/ready`, e.g.
    /// `{"ready":false,"live":true,"partitions_assigned":0,"postgres":"unreachable","stopping":false,
    /// "last_heartbeat_seconds_ago":0.4,"lanes":{…},"providers":[…],"backlog":{…}}`.
    public func json() -> String {
        let seconds = Double(sinceLastBeat.components.seconds) + Double(sinceLastBeat.components.attoseconds) / 1e18
        let ago = (seconds * 10).rounded() / 10
        return "{\"ready\":\(ready),\"live\":\(live),\"partitions_assigned\":\(partitionsAssigned),"
            + "\"postgres\":\"\(postgresReachable ? "reachable" : "unreachable")\","
            + "\"stopping\":\(stopping),\"last_heartbeat_seconds_ago\":\(ago),\(details.jsonMembers())}"
    }
}
