import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

/// Re-sends after GOAWAY or a reset, whoever made them (the provider client
/// or libcurl by itself), against the real simulator over TLS + HTTP/2.
@Suite("re-send counting", .serialized)
struct ResendCountingLiveTests {
    @Test("GOAWAY: every re-send is counted, libcurl's own included, as many as the simulator refused, labelled goaway")
    func goawayResendsAreCounted() async throws {
        try await withLiveStack(configure: { $0.scenarios = [SimulatorScenario(fault: .goaway(afterStreams: 50))] }) {
            stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 2)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let count = 600
            let statuses = try await StreamLimitLiveTests.burst(apns, count: count)
            let sim = stack.simulator.stats()
            let client = apns.stats()
            print(
                "GOAWAY: simulator sent \(sim.goawaysSent) GOAWAYs, saw \(sim.streamsOpened) requests, refused \(sim.streamsRefusedByGoaway) streams; client sent \(client.requestsSent) + libcurl \(client.resentByLibcurl); client re-sent \(client.resentWithoutStatus) (libcurl \(client.resentByLibcurl); goaway \(client.resentAfterGoaway), reset \(client.resentAfterReset), no_status \(client.resentNoStatus))"
            )
            #expect(statuses.count == count && statuses.allSatisfy { $0 == 200 })
            #expect(sim.goawaysSent >= 1 && sim.streamsRefusedByGoaway >= 1)
            // Every request the simulator saw beyond one per notification was a refused stream.
            #expect(sim.apnsSendsByID.count == count && sim.apnsSendsByID.values.allSatisfy { $0 == 1 })
            let extraSeen = sim.streamsOpened - count
            #expect(extraSeen == sim.streamsRefusedByGoaway)
            #expect(client.resentWithoutStatus == extraSeen)
            #expect(client.resentAfterGoaway == extraSeen)
            #expect(client.resentAfterReset == 0 && client.resentNoStatus == 0)
            #expect(client.requestsSent + client.resentByLibcurl == count + client.resentWithoutStatus)
        }
    }

    @Test("connection reset: the re-sends are counted and labelled reset")
    func resetResendsAreLabelled() async throws {
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(fault: .resetConnection(atRequest: 40, processed: false), count: 1)]
        }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let count = 300
            let statuses = try await StreamLimitLiveTests.burst(apns, count: count)
            let sim = stack.simulator.stats()
            let client = apns.stats()
            print(
                "reset: simulator reset \(sim.connectionsReset) connection(s), saw \(sim.streamsOpened - count) extra requests; client re-sent \(client.resentWithoutStatus) (libcurl \(client.resentByLibcurl); goaway \(client.resentAfterGoaway), reset \(client.resentAfterReset), no_status \(client.resentNoStatus))"
            )
            #expect(statuses.count == count && statuses.allSatisfy { $0 == 200 })
            #expect(sim.connectionsReset == 1)
            #expect(client.resentAfterReset >= 1)
            #expect(client.resentAfterGoaway == 0)
            #expect(client.resentWithoutStatus == client.resentAfterReset + client.resentNoStatus)
        }
    }
}
