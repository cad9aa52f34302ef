// TEMPORARY until PushCore's IntakePolicy/IntakeReason land (helper branch intake-core).
import Foundation
import PushCore

struct IntakePolicy: Sendable, Equatable {
    var now: Date
    var maxAge: TimeInterval
    var maxFuture: TimeInterval
    init(now: Date = Date(), maxAge: TimeInterval = 2_419_200, maxFuture: TimeInterval = 3_600) {
        self.now = now; self.maxAge = maxAge; self.maxFuture = maxFuture
    }
}
struct ShimReason { var rawValue: String }
extension IntakeError {
    var reason: ShimReason { ShimReason(rawValue: kind.rawValue) }
    var fieldPath: String { issues.first?.path ?? "$" }
    var detail: String { issues.map(\.description).joined(separator: "; ") }
}
extension PushNotification {
    static func decode(_ bytes: [UInt8], policy: IntakePolicy) -> Result<PushNotification, IntakeError> { decode(bytes) }
}
extension ReceiptError {
    var kindName: String { "invalid_receipt" }
    var fieldPathName: String? { nil }
}
