import Foundation
import Logging
import PushCore

/// The cache both OAuth access-token providers share (FCM's JWT bearer grant,
/// Huawei's client credentials grant): a token is kept until shortly before
/// it expires (5 minutes, or 10 % of its lifetime if that is shorter);
/// concurrent callers share one fetch; after a failed fetch, callers fail fast
/// with that error (and its `retryAfter`) for a back-off that doubles from
/// `failureBackoff` up to `maxFailureBackoff`, so an endpoint that is down
/// sees one attempt per back-off, never a stampede.
final class AccessTokenCache: Sendable {
    struct Cached: Sendable {
        var token: String
        var refreshAt: Date
    }

    struct Failure: Sendable {
        var error: any Error
        var until: Date
        var streak: Int
    }

    struct State: Sendable {
        var cached: Cached?
        var inFlight: Task<String, any Error>?
        var fetches = 0
        var successfulFetches = 0
        var failure: Failure?
    }

    /// The first back-off after a failed fetch; it doubles per further failure.
    static let failureBackoff: Double = 0.5
    /// The longest back-off after failed fetches.
    static let maxFailureBackoff: Double = 30

    let currentTime: @Sendable () -> Date
    /// `fcm` or `hms`: the prefix of the log messages and their metadata keys.
    private let label: String
    private let logger: Logger
    private let state = Locked(State())

    init(label: String, now: @escaping @Sendable () -> Date, logger: Logger) {
        self.label = label
        self.currentTime = now
        self.logger = logger
    }

    var fetchCount: Int { state.withLock { $0.fetches } }
    var successfulFetchCount: Int { state.withLock { $0.successfulFetches } }

    /// A valid token: the cached one, the one a fetch in flight brings, or a
    /// new fetch by `fetch` (which returns the token and its lifetime in seconds).
    func token(fetch: @escaping @Sendable () async throws -> (String, Double)) async throws -> String {
        enum Next {
            case cached(String)
            case wait(Task<String, any Error>)
            case fail(any Error)
        }
        let now = currentTime()
        let next = state.withLock { state -> Next in
            if let cached = state.cached, now < cached.refreshAt { return .cached(cached.token) }
            if let inFlight = state.inFlight { return .wait(inFlight) }
            if let failure = state.failure, now < failure.until {
                let wait = Duration.seconds(failure.until.timeIntervalSince(now))
                return .fail((failure.error as? ProviderError)?.with(retryAfter: wait) ?? failure.error)
            }
            state.fetches += 1
            // Unstructured on purpose: a cancelled caller must not cancel the
            // fetch the other callers are waiting for.
            let task = Task { try await self.fetchAndCache(fetch) }
            state.inFlight = task
            return .wait(task)
        }
        switch next {
        case .cached(let token): return token
        case .wait(let task): return try await task.value
        case .fail(let error): throw error
        }
    }

    /// The end of the back-off after a failed fetch, while one is in force:
    /// sends fail fast until then, so a held send waits at least that long.
    func failingUntil() -> Date? {
        let now = currentTime()
        return state.withLock { state in state.failure.flatMap { $0.until > now ? $0.until : nil } }
    }

    /// Forgets `token` (the provider refused it) unless a newer one already replaced it.
    func invalidate(token: String) {
        state.withLock { state in
            if state.cached?.token == token { state.cached = nil }
        }
    }

    private func fetchAndCache(_ fetch: @Sendable () async throws -> (String, Double)) async throws -> String {
        do {
            let (token, lifetime) = try await fetch()
            let margin = min(300, lifetime * 0.1)
            state.withLock { state in
                state.cached = Cached(token: token, refreshAt: currentTime().addingTimeInterval(lifetime - margin))
                state.inFlight = nil
                state.failure = nil
                state.successfulFetches += 1
            }
            // Logged as a Double: whatever the endpoint said, formatting it cannot trap.
            logger.debug("\(label).access token fetched", metadata: ["\(label).expires_in": "\(lifetime.rounded())"])
            return token
        } catch {
            let now = currentTime()
            state.withLock { state in
                state.inFlight = nil
                let streak = (state.failure?.streak ?? 0) + 1
                let backoff = min(Self.maxFailureBackoff, Self.failureBackoff * Double(1 << min(streak - 1, 16)))
                state.failure = Failure(error: error, until: now.addingTimeInterval(backoff), streak: streak)
            }
            logger.warning("\(label).access token fetch failed", metadata: ["\(label).error": "\(error)"])
            throw error
        }
    }
}
