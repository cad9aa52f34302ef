import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("A send gate closed while requests wait", .serialized)
struct SendGateLiveTests {
    /// A cancelled campaign must stop the sends already under way: requests
    /// waiting for a rate-limit slot when their gate closes are not sent.
    @Test("requests waiting for a rate-limit slot are not sent once their gate closes")
    func gateClosedDuringTheRateLimitWait() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            // One request at once, then one every 2 s: the rest wait in the limiter.
            let apns = try stack.makeAPNsClient(
                http: http,
                policy: ProviderClientPolicy(
                    rateLimit: .init(ratePerSecond: 0.5, burst: 1), maxRateLimitWait: .seconds(30)))
            let (sent, stopped) = try await Self.sendFour(apns) {
                try await waitUntil("the first request answered") { stack.simulator.stats().apnsAccepted >= 1 }
            }
            #expect(sent == 1, "only the request admitted before the gate closed went")
            #expect(stopped.count == 3)
            #expect(stopped.allSatisfy { $0.message == "campaign spring cancelled" && !$0.isRetriable })
            #expect(stack.simulator.stats().apnsAccepted == 1, "the simulator saw one request")
            #expect(apns.stats().requestsSent == 1)
        }
    }

    /// The wait that matters most under load: requests queued in the HTTP
    /// client for a stream slot (one connection, one stream here; the first
    /// answer is held 5 s) are withdrawn when their gate closes, never sent.
    @Test("requests waiting for an HTTP/2 stream slot are not sent once their gate closes")
    func gateClosedDuringTheStreamSlotWait() async throws {
        try await withOneAPNsStreamHeld(for: .seconds(5)) { stack, http, apns in
            let (sent, stopped) = try await Self.sendFour(apns) {
                try await waitUntil("one request on the wire, three in the client") {
                    stack.simulator.stats().streamsOpened >= 1 && http.stats().submitted >= 4
                }
            }
            #expect(sent == 1, "only the request on the wire when the gate closed went")
            #expect(stopped.count == 3)
            #expect(stack.simulator.stats().apnsAccepted == 1, "the simulator saw one request")
            #expect(apns.stats().requestsSent == 1)
        }
    }

    /// Sends four requests through one gate and closes it once `closeWhen`
    /// returns: how many were answered 200, and the errors of those the gate stopped.
    static func sendFour(
        _ apns: APNsClient, closeWhen: () async throws -> Void
    ) async throws -> (sent: Int, stopped: [ProviderError]) {
        let gate = SendGate()
        let results = try await withThrowingTaskGroup(of: Result<Int, ProviderError>.self) { group in
            for n in 0..<4 {
                group.addTask {
                    do {
                        let response = try await apns.send(
                            LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased()), gate: gate)
                        return .success(response.status)
                    } catch let error as ProviderError {
                        return .failure(error)
                    }
                }
            }
            try await closeWhen()
            gate.close(because: "campaign spring cancelled")
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let sent = results.filter { if case .success(200) = $0 { true } else { false } }.count
        let stopped = results.compactMap { if case .failure(let e) = $0, e.kind == .gateClosed { e } else { nil } }
        return (sent, stopped)
    }

    @Test("an open gate, or none, lets every request go")
    func openGate() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let gate = SendGate(closedBecause: "closed")
            gate.open()
            let a = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(1), apnsID: UUID().uuidString.lowercased()), gate: gate)
            let b = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(2), apnsID: UUID().uuidString.lowercased()))
            #expect(a.status == 200 && b.status == 200)
        }
    }
}
