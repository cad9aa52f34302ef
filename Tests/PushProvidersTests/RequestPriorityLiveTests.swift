import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("Urgent requests overtake background ones waiting for a stream slot", .serialized)
struct RequestPriorityLiveTests {
    /// A campaign's requests queue in the HTTP client for its host's stream
    /// slots (one connection, one stream here, its first answer held 5 s);
    /// a one-time code sent after them takes the next free slot, ahead of
    /// every one of them. The order is the simulator's: the order in which
    /// the callers resume is the scheduler's, not the client's.
    @Test("an urgent request goes before background requests queued ahead of it")
    func urgentOvertakesQueuedBackground() async throws {
        try await withOneAPNsStreamHeld(for: .seconds(5)) { stack, http, apns in
            let answered = Locked(0)
            var names = [LiveStack.deviceToken(0): "blocker", LiveStack.deviceToken(99): "code"]
            for n in 1...10 { names[LiveStack.deviceToken(n)] = "campaign" }
            func send(_ n: Int, _ priority: HTTPRequestPriority) async throws {
                let response = try await apns.send(
                    LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased()), priority: priority)
                #expect(response.status == 200)
                answered.withLock { $0 += 1 }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await send(0, .background) }
                try await waitUntil("the first request on the wire") { stack.simulator.stats().streamsOpened >= 1 }
                for n in 1...10 { group.addTask { try await send(n, .background) } }
                try await waitUntil("11 requests in the client") { http.stats().submitted >= 11 }
                group.addTask { try await send(99, .urgent) }
                try await waitUntil("12 requests in the client") { http.stats().submitted >= 12 }
                try #require(answered.withLock { $0 } == 0, "every request was queued while the first was held")
                try await group.waitForAll()
            }
            let order = stack.simulator.stats().requests.map { names[$0.target] ?? $0.target }
            #expect(order.count == 12)
            #expect(Array(order.prefix(2)) == ["blocker", "code"], "the code took the first slot that freed: \(order)")
        }
    }
}
