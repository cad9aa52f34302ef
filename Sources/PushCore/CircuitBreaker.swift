/// A circuit breaker for one provider host: it opens when server errors and
/// connection failures pass a threshold, so the worker stops taking new work
/// instead of pushing everything into retry topics; after a cool-down a few
/// probes test the host and close it again (or re-open it).
///
/// Pure state machine: time comes in as `now`.
public struct CircuitBreaker: Sendable {
    /// When to open, how long to stay open, how many probes to allow.
    public struct Configuration: Sendable, Equatable {
        /// Open when failures / requests in the window reach this (0 < ratio ≤ 1)…
        public var failureRatio: Double
        /// …and the window holds at least this many requests.
        public var minimumRequests: Int
        /// The sliding window the ratio is measured over.
        public var window: Duration
        /// How long the circuit stays open before probing.
        public var openDuration: Duration
        /// Requests allowed while half-open; that many successes close it.
        public var halfOpenProbes: Int

        public init(
            failureRatio: Double = 0.5, minimumRequests: Int = 20, window: Duration = .seconds(10),
            openDuration: Duration = .seconds(30), halfOpenProbes: Int = 3
        ) {
            self.failureRatio = failureRatio
            self.minimumRequests = minimumRequests
            self.window = window
            self.openDuration = openDuration
            self.halfOpenProbes = halfOpenProbes
        }

        /// The first value out of range, as `(field, problem)`; nil when valid.
        public var problem: (field: String, message: String)? {
            if !(failureRatio > 0 && failureRatio <= 1) { return ("failure_ratio", "must be in (0, 1]") }
            if minimumRequests < 1 { return ("minimum_requests", "must be ≥ 1") }
            if window <= .zero { return ("window", "must be > 0") }
            if openDuration <= .zero { return ("open_duration", "must be > 0") }
            if halfOpenProbes < 1 { return ("half_open_probes", "must be ≥ 1") }
            return nil
        }
    }

    /// Where the circuit is.
    public enum State: Sendable, Equatable {
        /// Requests flow; outcomes are counted.
        case closed
        /// Requests are refused until the instant.
        case open(until: ContinuousClock.Instant)
        /// A few probe requests are let through.
        case halfOpen

        /// The gauge value: 0 closed, 1 half-open, 2 open.
        public var gaugeValue: Int {
            switch self {
            case .closed: 0
            case .halfOpen: 1
            case .open: 2
            }
        }
    }

    /// How one request ended, as far as the host's health goes.
    public enum Outcome: Sendable, Equatable {
        /// The host answered (any status below 500 counts: it is up).
        case success
        /// A 5xx, a connection failure or a timeout.
        case failure
        /// Says nothing about the host (cancelled, refused locally); frees a probe slot.
        case neutral
    }

    /// One slice of the window.
    private struct Bucket: Sendable {
        var index: Int64
        var successes = 0
        var failures = 0
    }

    public let configuration: Configuration
    public private(set) var state: State = .closed
    /// How often the circuit opened.
    public private(set) var timesOpened = 0
    private var buckets: [Bucket] = []
    private var probesInFlight = 0
    /// Probes that succeeded since the circuit went half-open.
    public private(set) var probeSuccesses = 0
    private var origin: ContinuousClock.Instant?
    static let bucketCount: Int64 = 10

    public init(configuration: Configuration) {
        self.configuration = configuration
    }
}

extension CircuitBreaker {
    /// Whether a request may go now; moves open → half-open when the cool-down
    /// is over and counts half-open probes.
    public mutating func allowRequest(now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed:
            return true
        case .open(let until):
            guard now >= until else { return false }
            state = .halfOpen
            probesInFlight = 0
            probeSuccesses = 0
            return takeProbe()
        case .halfOpen:
            return takeProbe()
        }
    }

    /// Records how a request ended; returns the new state if it changed.
    @discardableResult
    public mutating func record(_ outcome: Outcome, now: ContinuousClock.Instant) -> State? {
        switch state {
        case .open:
            return nil  // late answers of requests sent before it opened
        case .halfOpen:
            probesInFlight = max(0, probesInFlight - 1)
            switch outcome {
            case .neutral: return nil
            case .failure: return open(now: now)
            case .success:
                probeSuccesses += 1
                guard probeSuccesses >= configuration.halfOpenProbes else { return nil }
                state = .closed
                buckets.removeAll()
                return state
            }
        case .closed:
            guard outcome != .neutral else { return nil }
            count(outcome, now: now)
            let (successes, failures) = totals(now: now)
            let total = successes + failures
            guard total >= configuration.minimumRequests,
                Double(failures) >= configuration.failureRatio * Double(total)
            else { return nil }
            return open(now: now)
        }
    }

    /// While half-open: whether a probe may still go (the others wait for
    /// the probes' outcome). Always true while closed, false while open.
    public var hasProbeSlot: Bool {
        switch state {
        case .closed: true
        case .open: false
        case .halfOpen: probesInFlight < configuration.halfOpenProbes
        }
    }

    /// Probes still to go out for the circuit to close if they all succeed:
    /// none while closed, all of them while open; while half-open, the
    /// successes still needed less the probes in flight.
    public var probesToSend: Int {
        switch state {
        case .closed: 0
        case .open: configuration.halfOpenProbes
        case .halfOpen: max(0, configuration.halfOpenProbes - probeSuccesses - probesInFlight)
        }
    }

    private mutating func takeProbe() -> Bool {
        guard probesInFlight < configuration.halfOpenProbes else { return false }
        probesInFlight += 1
        return true
    }

    private mutating func open(now: ContinuousClock.Instant) -> State {
        state = .open(until: now + configuration.openDuration)
        timesOpened += 1
        probesInFlight = 0
        probeSuccesses = 0
        buckets.removeAll()
        return state
    }

    private mutating func count(_ outcome: Outcome, now: ContinuousClock.Instant) {
        let index = bucketIndex(now)
        if buckets.last?.index != index { buckets.append(Bucket(index: index)) }
        if outcome == .success { buckets[buckets.count - 1].successes += 1 } else { buckets[buckets.count - 1].failures += 1 }
    }

    /// Successes and failures within the window ending at `now` (what the
    /// breaker judges by): a client's recent error share, for health pages.
    public func windowCounts(now: ContinuousClock.Instant) -> (successes: Int, failures: Int) {
        guard let origin else { return (0, 0) }
        let width = configuration.window / Int(Self.bucketCount)
        guard width > .zero else { return (0, 0) }
        let oldest = Int64((now - origin) / width) - Self.bucketCount + 1
        return buckets.filter { $0.index >= oldest }.reduce((0, 0)) { ($0.0 + $1.successes, $0.1 + $1.failures) }
    }

    /// Successes and failures within the window ending at `now`; drops older buckets.
    private mutating func totals(now: ContinuousClock.Instant) -> (Int, Int) {
        let oldest = bucketIndex(now) - Self.bucketCount + 1
        buckets.removeAll { $0.index < oldest }
        return buckets.reduce((0, 0)) { ($0.0 + $1.successes, $0.1 + $1.failures) }
    }

    private mutating func bucketIndex(_ now: ContinuousClock.Instant) -> Int64 {
        let origin = self.origin ?? now
        self.origin = origin
        let width = configuration.window / Int(Self.bucketCount)
        guard width > .zero else { return 0 }
        return Int64((now - origin) / width)
    }
}
