import Foundation
import PushCore
import XCTest

@testable import PushWorker

/// The worker's short-lived registry cache, on its own (no PostgreSQL).
final class TokenRegistryCacheTests: XCTestCase {
    let t0 = ContinuousClock.now

    private func token(_ n: Int, app: String = "shop", platform: Platform = .ios) -> AppToken {
        AppToken(app: app, platform: platform, token: String(repeating: String(n % 10), count: 64))
    }

    func testAnswersAreKeptForTheirTimeUnknownOnesToo() {
        let cache = TokenRegistryCache(ttl: .seconds(30))
        let invalid = token(1), sandbox = token(2), unknown = token(3)
        let (known, missing) = cache.split([invalid, sandbox, unknown], now: t0)
        XCTAssertTrue(known.isEmpty)
        XCTAssertEqual(Set(missing.map(\.token)), [invalid, sandbox, unknown])
        cache.remember(asked: missing, states: [invalid: .init(invalid: true), sandbox: .init(sandbox: true)], now: t0)

        let later = cache.split([invalid, sandbox, unknown], now: t0 + .seconds(29))
        XCTAssertEqual(later.known, [invalid: .init(invalid: true), sandbox: .init(sandbox: true), unknown: .unknown])
        XCTAssertTrue(later.missing.isEmpty)
        XCTAssertEqual(cache.split([invalid], now: t0 + .seconds(30)).missing.map(\.token), [invalid], "expired at ttl")
    }

    func testTheSameTokenOfAnotherAppOrPlatformIsAnotherEntry() {
        let cache = TokenRegistryCache(ttl: .seconds(30))
        let a = token(1), otherApp = token(1, app: "news"), otherPlatform = token(1, platform: .android)
        cache.remember(asked: cache.split([a], now: t0).missing, states: [a: .init(invalid: true)], now: t0)
        let (known, missing) = cache.split([a, otherApp, otherPlatform], now: t0)
        XCTAssertEqual(known, [a: .init(invalid: true)])
        XCTAssertEqual(Set(missing.map(\.token)), [otherApp, otherPlatform])
    }

    func testForgottenTokensAreAskedAgain() {
        let cache = TokenRegistryCache(ttl: .seconds(30))
        let a = token(1), b = token(2)
        cache.remember(asked: cache.split([a, b], now: t0).missing, states: [:], now: t0)
        cache.forget([a])
        XCTAssertEqual(cache.split([a, b], now: t0).missing.map(\.token), [a])
        XCTAssertEqual(cache.count, 1)
    }

    func testAtCapacityExpiredEntriesGoFirstThenEverything() {
        let cache = TokenRegistryCache(ttl: .seconds(10), capacity: 4)
        let old = (0..<3).map { token($0, app: "old\($0)") }
        cache.remember(asked: cache.split(Set(old), now: t0).missing, states: [:], now: t0)
        // Two more after the first three expired: those are dropped, the new ones kept.
        let new = (0..<2).map { token($0, app: "new\($0)") }
        cache.remember(asked: cache.split(Set(new), now: t0 + .seconds(11)).missing, states: [:], now: t0 + .seconds(11))
        XCTAssertEqual(cache.count, 2)
        // Three more while those two are fresh: over capacity even after expiry, so all go first.
        let more = (0..<3).map { token($0, app: "more\($0)") }
        cache.remember(asked: cache.split(Set(more), now: t0 + .seconds(12)).missing, states: [:], now: t0 + .seconds(12))
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.split(Set(new), now: t0 + .seconds(12)).missing.count, 2)
    }

    /// Tokens as hostile producers send them (decode already repaired invalid
    /// UTF-8 to U+FFFD): each its own entry, none confused with another.
    func testHostileTokensAreEachTheirOwnEntry() {
        let cache = TokenRegistryCache(ttl: .seconds(30))
        let odd = ["", "\0", "\0\0", "a\0b", "a\u{FFFD}b", "a\u{FFFD}\u{FFFD}b", String(repeating: "f", count: 4096),
                   String(repeating: "f", count: 4097), "é", "e\u{301}", String(repeating: "🚀", count: 1000)]
        let tokens = odd.map { AppToken(app: "shop", platform: .ios, token: $0) }
        var states: [AppToken: TokenRegistryState] = [:]
        for (i, token) in tokens.enumerated() where i % 2 == 0 { states[token] = .init(invalid: true) }
        cache.remember(asked: cache.split(Set(tokens), now: t0).missing, states: states, now: t0)
        let (known, missing) = cache.split(Set(tokens), now: t0)
        XCTAssertTrue(missing.isEmpty)
        for token in tokens { XCTAssertEqual(known[token], states[token] ?? .unknown, token.token.debugDescription) }
    }

    /// Expiry is kept as nanoseconds from the cache's creation: instants before
    /// it (negative), a ttl that would overflow, and the exact boundary.
    func testExpiryHoldsBeforeTheCachesOriginAndAtTheLimits() {
        let cache = TokenRegistryCache(ttl: .seconds(30))
        let a = token(1), b = token(2)
        let early = t0 - .seconds(86_400) - .nanoseconds(1)
        cache.remember(asked: cache.split([a], now: early).missing, states: [a: .init(sandbox: true)], now: early)
        XCTAssertEqual(cache.split([a], now: early + .seconds(30) - .nanoseconds(1)).known, [a: .init(sandbox: true)])
        XCTAssertEqual(cache.split([a], now: early + .seconds(30)).missing.map(\.token), [a], "expired at ttl, to the nanosecond")

        let forever = TokenRegistryCache(ttl: .seconds(Int64.max))
        forever.remember(asked: forever.split([b], now: t0).missing, states: [:], now: t0)
        XCTAssertEqual(forever.split([b], now: t0 + .seconds(100 * 365 * 86_400)).known, [b: .unknown], "a huge ttl saturates")

        let instant = TokenRegistryCache(ttl: .nanoseconds(1) / 2)
        instant.remember(asked: instant.split([b], now: t0).missing, states: [:], now: t0)
        XCTAssertEqual(instant.split([b], now: t0).missing.map(\.token), [b], "under a nanosecond: never fresh")
    }

    /// Filling past capacity again and again (expired entries dropped in place,
    /// then everything): never more than capacity, the latest always found.
    func testRefillingPastCapacityKeepsTheLatest() {
        let cache = TokenRegistryCache(ttl: .seconds(5), capacity: 100)
        for round in 0..<40 {
            let now = t0 + .seconds(round * 2)
            let batch = Set((0..<30).map { AppToken(app: "r\(round)", platform: .ios, token: "t\($0)") })
            cache.remember(asked: cache.split(batch, now: now).missing, states: [:], now: now)
            XCTAssertLessThanOrEqual(cache.count, 100, "round \(round)")
            XCTAssertTrue(cache.split(batch, now: now).missing.isEmpty, "round \(round)'s tokens are cached")
            if round >= 3 {
                let stale = Set((0..<30).map { AppToken(app: "r\(round - 3)", platform: .ios, token: "t\($0)") })
                XCTAssertEqual(cache.split(stale, now: now).missing.count, 30, "round \(round - 3)'s expired")
            }
        }
    }

    func testNoTimeToLiveMeansNoCache() {
        let cache = TokenRegistryCache(ttl: .zero)
        let a = token(1)
        cache.remember(asked: cache.split([a], now: t0).missing, states: [a: .init(invalid: true)], now: t0)
        XCTAssertEqual(cache.split([a], now: t0).missing.map(\.token), [a])
        XCTAssertEqual(cache.count, 0)
    }
}
