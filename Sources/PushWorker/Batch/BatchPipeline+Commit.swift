import Foundation
import PushCore

extension BatchPipeline {
    /// Commits a decided part: produces its retries and dead letters (waiting
    /// for Kafka's acknowledgement), then writes its outcome, then counts it.
    func commit(_ part: DecidedPart, firstOfBatch: Bool) async throws {
        var outcome = part.outcome
        if !outcome.outgoing.isEmpty {
            guard let producer else { throw PipelineError.noProducer }
            let produced = try await producer.produce(outcome.outgoing)
            for _ in produced.failed { countPoison(.deadLetter) }
            outcome.rejections += produced.failed
            if !produced.rerouted.isEmpty { outcome.deadLetterRerouted(produced.rerouted) }
            outcome.outgoing = produced.sent
        }
        let written = try await writer.writeIsolating(outcome)
        for _ in 0..<written.refused { countPoison(.write) }
        count(outcome, written: written.written, messages: part.taken, batch: firstOfBatch)
    }

    /// `written`: the part's delivery rows as the writer wrote them (one per key).
    private func count(_ outcome: BatchOutcome, written: [DeliveryRecord], messages: Int, batch: Bool) {
        counters.withLock { c in
            if batch { c.batches += 1 }
            c.messages += messages
            c.deliveries += outcome.deliveries.count
            c.suppressed += outcome.suppressed
            c.rejectedMessages += outcome.rejections.count
            c.produced += outcome.outgoing.count
            c.deviceUpdates += outcome.deviceUpdates.count
            for d in written {
                guard let provider = d.provider else { c.usersWithoutDevices += 1; continue }
                let key = WorkerCounters.SentKey(provider: provider, app: d.app, status: d.status, reason: d.providerReason ?? "")
                c.sent[key, default: 0] += 1
            }
            for m in outcome.outgoing {
                if m.topic == topics.deadLetter {
                    c.deadLettersByReason[m.label.isEmpty ? "other" : m.label, default: 0] += 1
                } else {
                    c.retriesByTier[m.label, default: 0] += 1
                }
            }
        }
    }
}

/// A pipeline used beyond what it was built for.
enum PipelineError: Error, CustomStringConvertible {
    /// `run` on a pipeline built without a producer (one for `outcome(of:)` only).
    case noProducer

    var description: String {
        switch self {
        case .noProducer: "the batch pipeline has no Kafka producer: it cannot produce retries or dead letters"
        }
    }
}
