import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("APNs against the simulator", .serialized)
struct APNsLiveTests {
    @Test("500 concurrent sends: all 200, apns-id echoed, multiplexed over <= 2 connections")
    func concurrentSends() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 2)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let count = 500
            let start = ContinuousClock.now
            let results = try await withThrowingTaskGroup(of: (String, ProviderResponse, Int).self) { group in
                for n in 0..<count {
                    group.addTask {
                        let id = UUID().uuidString.lowercased()
                        let (response, resends) = try await sendResendingUnanswered(
                            apns, LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: id))
                        return (id, response, resends)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let resent = results.reduce(0) { $0 + $1.2 }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("APNs: \(count) concurrent sends in \(elapsed) = \(Int(Double(count) / seconds)) req/s, re-sent \(resent), connections \(http.stats().connectionsOpened)")

            #expect(results.count == count)
            #expect(results.allSatisfy { $0.1.status == 200 })
            #expect(results.allSatisfy { $0.1.header("apns-id") == $0.0 })
            let stats = http.stats()
            // The client's own re-sends each followed a failed transfer; libcurl's own did not.
            let resentByClient = apns.stats().resentWithoutStatus - apns.stats().resentByLibcurl
            #expect(stats.succeeded == count && stats.failed == resent + resentByClient)
            #expect(resent + resentByClient <= count / 10)
            // Multiplexed: curl never has more than 2 connections open
            // (CURLMOPT_MAX_HOST_CONNECTIONS), and each one it opened carried
            // on average >= 100 requests. (The simulator may drop a connection
            // after 200 RST_STREAMs from libcurl 7.88; curl then opens a
            // replacement, so the total opened can exceed 2: see the report.)
            #expect(stats.connectionsOpened >= 1 && count / stats.connectionsOpened >= 100)
            let simulatorStats = stack.simulator.stats()
            #expect(simulatorStats.apnsSendsByID.count == count)
            #expect(simulatorStats.apnsAccepted >= count)
            #expect(simulatorStats.connectionsAccepted == stats.connectionsOpened)

            // A second, smaller wave reuses the open connections.
            let before = http.stats().connectionsOpened
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<100 {
                    group.addTask {
                        try await sendResendingUnanswered(
                            apns,
                            LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased())
                        ).0.status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(http.stats().connectionsOpened <= before + 2)
        }
    }

    @Test("one connection carries 150 concurrent streams")
    func singleConnection() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let ports = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<150 {
                    group.addTask {
                        let response = try await http.execute(
                            HTTPRequest(
                                method: "POST", url: stack.baseURL + "/3/device/\(LiveStack.deviceToken(n))",
                                headers: [
                                    (name: "authorization", value: "bearer \(try apns.tokens.currentToken())"),
                                    (name: "apns-topic", value: "com.example.app"),
                                ],
                                body: Array(#"{"aps":{"alert":"x"}}"#.utf8)))
                        #expect(response.status == 200)
                        #expect(response.httpVersion == .http2)
                        return response.localPort
                    }
                }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect(ports.count == 1)
            #expect(http.stats().connectionsOpened == 1)
            #expect(stack.simulator.stats().connectionsAccepted == 1)
        }
    }

    @Test("a dead token gets 410 Unregistered with its timestamp")
    func deadToken() async throws {
        let since = Date(timeIntervalSince1970: 1_750_000_000.123)
        let dead = LiveStack.deviceToken(0xdead)
        try await withLiveStack(deadTokens: [dead: since]) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let response = try await apns.send(LiveStack.apnsRequest(token: dead, apnsID: UUID().uuidString.lowercased()))
            #expect(response.status == 410)
            let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(body?["reason"] as? String == "Unregistered")
            #expect((body?["timestamp"] as? NSNumber)?.int64Value == 1_750_000_000_123)

            let later = LiveStack.deviceToken(0xbeef)
            stack.simulator.markDead(token: later, since: Date(timeIntervalSince1970: 1_760_000_000))
            let second = try await apns.send(LiveStack.apnsRequest(token: later, apnsID: UUID().uuidString.lowercased()))
            #expect(second.status == 410)
            #expect(second.body.count > 0)
        }
    }

    @Test("JWT older than an hour: 403 ExpiredProviderToken, one new token, retried once, accepted")
    func expiredProviderToken() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            // The first token is signed two hours in the past; later ones at the real time.
            let calls = CallCounter()
            let apns = try stack.makeAPNsClient(http: http) {
                calls.next() == 0 ? Date().addingTimeInterval(-7200) : Date()
            }
            let id = UUID().uuidString.lowercased()
            let response = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(1), apnsID: id))
            #expect(response.status == 200)
            let stats = stack.simulator.stats()
            #expect(stats.count("apns", 403, "ExpiredProviderToken") == 1)
            #expect(apns.tokens.mintCount == 2)
            #expect(apns.stats().tokenRefreshes == 2)
            #expect(apns.stats().requestsSent == 2)
        }
    }

    @Test("a server certificate from an unknown CA fails with curl 60 and no status")
    func unknownCA() async throws {
        try await withLiveStack { stack in
            let http = try HTTP2Client(configuration: HTTPClientConfiguration(), logger: .test)  // system store only
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            do {
                _ = try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(1), apnsID: UUID().uuidString.lowercased()))
                Issue.record("expected a TLS failure")
            } catch let error as HTTPError {
                #expect(error.curlCode == 60)
                #expect(error.kind == .transfer)
                #expect(error.statusReceived == false)
                #expect(error.isRetriable == false)
                #expect(error.message.lowercased().contains("certificate"))
            }
            #expect(stack.simulator.stats().apnsSendsByID.isEmpty)
        }
    }
}

/// Counts calls across threads.
final class CallCounter: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value - 1
    }
}
