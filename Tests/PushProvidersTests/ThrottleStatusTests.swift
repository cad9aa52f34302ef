import Logging
import Testing

@testable import PushProviders

/// Push Kit's 503 is flow control ("sending too fast"), not an outage: it
/// slows the client's limiter as a 429 does and never opens the breaker,
/// where for APNs or FCM a run of 503s is an outage that opens it.
@Suite("Throttle statuses")
struct ThrottleStatusTests {
    static let logger = Logger(label: "test.throttle")

    @Test("a run of Push Kit 503s slows the limiter and leaves the circuit closed")
    func pushKitFlowControl() throws {
        let guardian = try ProviderGuard(host: "https://push-api.cloud.huawei.com", policy: .hmsDefault, logger: Self.logger)
        for _ in 0..<40 { guardian.noteResponse(status: 503, retryAfter: .seconds(1)) }
        #expect(guardian.isAcceptingWork)
        #expect(guardian.snapshot().rateLimited == 40)
    }

    @Test("the same run from APNs opens the circuit and is no rate limit")
    func apnsOutage() throws {
        let guardian = try ProviderGuard(host: "https://api.push.apple.com", policy: .apnsDefault, logger: Self.logger)
        for _ in 0..<40 { guardian.noteResponse(status: 503, retryAfter: nil) }
        #expect(!guardian.isAcceptingWork)
        #expect(guardian.snapshot().rateLimited == 0)
    }

    @Test("429 throttles every provider")
    func tooManyRequests() throws {
        for policy in [ProviderClientPolicy.apnsDefault, .fcmDefault, .hmsDefault, .webPushDefault] {
            let guardian = try ProviderGuard(host: "https://example.net", policy: policy, logger: Self.logger)
            for _ in 0..<40 { guardian.noteResponse(status: 429, retryAfter: .seconds(1)) }
            #expect(guardian.isAcceptingWork)
            #expect(guardian.snapshot().rateLimited == 40)
        }
    }
}
