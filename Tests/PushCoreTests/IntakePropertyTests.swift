import Foundation
import PushCore
import PushTestSupport
import XCTest

/// Issue 15's pure half: no byte sequence traps the intake. 100,000 hostile
/// variants of every valid example (FuzzMutator: byte damage, NULs, invalid
/// UTF-8, numbers out of range, deep nesting, duplicate keys, BOM, calendar
/// extremes, long strings) plus random bytes go through
/// `PushNotification.decode`, and every success through translation for
/// every recipient. A trap kills the test process: that is the failure signal.
/// Seed: FUZZ_SEED (default 15); count: FUZZ_PROPERTY_ITERATIONS (default 100,000);
/// FUZZ_TRACE=1 prints every input before it is tried (the last line before a trap is the culprit).
final class IntakePropertyTests: XCTestCase {
    let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop")

    func testNoMutatedMessageTrapsDecodeOrTranslation() throws {
        let env = ProcessInfo.processInfo.environment
        let seed = env["FUZZ_SEED"].flatMap(UInt64.init) ?? 15
        let iterations = env["FUZZ_PROPERTY_ITERATIONS"].flatMap(Int.init) ?? 100_000
        let examples = try Examples.files("valid").map { try Examples.bytes($0) }
        XCTAssertGreaterThanOrEqual(examples.count, 10, "the valid examples are the corpus")
        var rng = FuzzRandom(seed: seed)
        var successes = 0, translated = 0, translationFailures = 0
        var failuresByKind: [String: Int] = [:]
        let fixedNow = Date(timeIntervalSince1970: 1_795_000_000)
        let started = ContinuousClock.now
        let trace = env["FUZZ_TRACE"] == "1"
        for i in 0..<iterations {
            let mutant = i % 100 == 99
                ? FuzzMutator.randomBytes(count: rng.below(2048), rng: &rng)
                : FuzzMutator.mutate(examples[i % examples.count], rng: &rng)
            // A trap leaves no report: FUZZ_TRACE=1 prints each input first, so the last line names the culprit.
            if trace { FileHandle.standardError.write(Data("intake property \(i): \(mutant.mutation): \(String(decoding: mutant.bytes.prefix(600), as: UTF8.self).debugDescription)\n".utf8)) }
            switch PushNotification.decode(mutant.bytes, policy: Examples.policy) {
            case .failure(let error):
                failuresByKind[error.kind.rawValue, default: 0] += 1
                if error.issues.isEmpty || error.issues.contains(where: { $0.reason.isEmpty }) {
                    XCTFail("iteration \(i) (seed \(seed), \(mutant.mutation)): a rejection without a reason: \(error)")
                }
            case .success(let n):
                successes += 1
                _ = n.partitionKey
                _ = n.isExpired(at: fixedNow)
                var recipients = n.recipients
                for user in n.userRecipients {
                    recipients.append(Recipient(token: String(repeating: "ab", count: 32), platform: .ios))
                    recipients.append(Recipient(token: "fcm-" + user, platform: .android))
                }
                var results = recipients.flatMap { r in
                    [n.request(for: r, context: context), n.request(for: r, context: context, now: fixedNow)]
                }
                results += n.fcmTargets.map { n.request(for: $0, context: context, now: fixedNow) }
                for result in results {
                    switch result {
                    case .success: translated += 1
                    case .failure(let error):
                        translationFailures += 1
                        if error.code.isEmpty { XCTFail("iteration \(i) (\(mutant.mutation)): translation failure without a code") }
                    }
                }
            }
        }
        let failures = failuresByKind.values.reduce(0, +)
        XCTAssertEqual(successes + failures, iterations)
        XCTAssertGreaterThan(successes, iterations / 100, "some mutants must still decode, or the corpus tests nothing past the parser")
        XCTAssertGreaterThan(failures, iterations / 2, "most mutants must be rejected")
        XCTAssertGreaterThan(translated, 0)
        let seconds = (ContinuousClock.now - started).components.seconds
        print("intake property: \(iterations) mutants (seed \(seed)), decoded \(successes), rejected \(failures) "
              + "\(failuresByKind.sorted { $0.key < $1.key }), translated \(translated), translation refused \(translationFailures), \(seconds) s")
    }
}
