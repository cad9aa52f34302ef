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
    /// slots (one connection, one stream here; the first answer takes 1 s);
    /// a one-time code sent after them takes the next free slot, ahead of
    /// every one of them.
    @Test("an urgent request goes before background requests queued ahead of it")
    func urgentOvertakesQueuedBackground() async throws {
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(provider: "apns", fault: .delay(milliseconds: 1000), count: 1)]
        }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1) { $0.maxConcurrentStreams = 1 }
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let answered = Locked<[String]>([])
            func send(_ name: String, _ n: Int, _ priority: HTTPRequestPriority) async throws {
                let response = try await apns.send(
                    LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased()), priority: priority)
                #expect(response.status == 200)
                answered.withLock { $0.append(name) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await send("blocker", 0, .background) }
                try await Task.sleep(for: .milliseconds(200))
                for n in 1...10 { group.addTask { try await send("campaign", n, .background) } }
                try await Task.sleep(for: .milliseconds(200))
                group.addTask { try await send("code", 99, .urgent) }
                try await group.waitForAll()
            }
            let order = answered.withLock { $0 }
            #expect(order.count == 12)
            #expect(Array(order.prefix(2)) == ["blocker", "code"], "the code took the first slot that freed: \(order)")
        }
    }
}
