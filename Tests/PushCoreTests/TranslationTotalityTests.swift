import Foundation
import XCTest
@testable import PushCore

/// Issue 15: what translation converts from a notification's dates is total.
/// `ttl_seconds: 9223372036854775807` once reached `APNsTranslator.expiration`
/// and trapped in `Int64(Double)`; decode now bounds it, and these functions
/// no longer trap for any `Date` at all (notifications built in code too).
final class TranslationTotalityTests: XCTestCase {
    let ios = String(repeating: "ab", count: 32)

    func testAPNsExpirationAndFCMTTLAreTotalForExtremeDates() {
        let created = Date(timeIntervalSince1970: 1_795_262_400)
        var n = PushNotification(id: UUID(), app: "a", createdAt: created,
                                 recipients: [Recipient(token: ios, platform: .ios)], alert: .init(body: "b"))
        let extremes: [(Date, String, String)] = [
            (Date(timeIntervalSince1970: 9.3e18), "253402300799", "2419200s"),
            (Date(timeIntervalSince1970: 1e300), "253402300799", "2419200s"),
            (Date(timeIntervalSince1970: .infinity), "253402300799", "0s"),
            (Date(timeIntervalSince1970: -1e300), "0", "0s"),
            (Date(timeIntervalSince1970: -.infinity), "0", "0s"),
            (Date(timeIntervalSince1970: .nan), "0", "0s"),
            (.distantFuture, "64092211200", "2419200s"),
            (.distantPast, "0", "0s"),
            (created.addingTimeInterval(90), "1795262490", "90s"),
        ]
        for (expiresAt, apns, fcm) in extremes {
            n.expiresAt = expiresAt
            XCTAssertEqual(APNsTranslator.expiration(for: n), apns, "\(expiresAt.timeIntervalSince1970)")
            XCTAssertEqual(FCMTranslator.ttl(for: n, now: nil), fcm, "\(expiresAt.timeIntervalSince1970)")
            XCTAssertEqual(FCMTranslator.ttl(for: n, now: Date(timeIntervalSince1970: .nan)), "0s")
            // The whole translation, and the re-encoding a retry does, go through without a trap.
            let context = TranslationContext(apnsTopic: "a", fcmProjectID: "p")
            _ = APNsTranslator.request(for: n, token: ios, context: context)
            _ = FCMTranslator.request(for: n, target: .token(String(repeating: "t", count: 40)), context: context)
            _ = n.intakeJSON().encoded()
        }
    }

    func testTimestampFormatIsTotal() {
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: 1e300)), "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: -1e300)), "0000-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: .nan)), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamps.format(Date(timeIntervalSince1970: 1_795_262_400.25)), "2026-11-21T12:00:00.250Z")
    }
}
