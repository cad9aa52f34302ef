import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("Provider transport faults against the simulator", .serialized)
struct TransportLiveTests {
    static func id() -> String { UUID().uuidString.lowercased() }

    @Test("MAX_CONCURRENT_STREAMS lowered to 1 after a rejection: all 120 complete, none lost, none twice")
    func singleStreamAfterRejection() async throws {
        try await withLiveStack(configure: { $0.scenarios = [SimulatorScenario(fault: .singleStreamAfterRejection)] }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            // A rejected request (bad topic) makes the server drop the stream limit to 1.
            var bad = LiveStack.apnsRequest(token: LiveStack.deviceToken(1), apnsID: Self.id())
            bad.headers.removeAll { $0.name == "apns-topic" }
            #expect(try await apns.send(bad).status >= 400)
            // 120, not more: after the drop they go one at a time, and each
            // request's 30 s timeout runs while it waits its turn, so 300 timed
            // out on a machine whose cores a build was using.
            let ids = (0..<120).map { _ in Self.id() }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (n, id) in ids.enumerated() {
                    group.addTask { try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n + 10), apnsID: id)).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let stats = stack.simulator.stats()
            print("single stream: settings updates \(stats.settingsUpdatesSent), re-sent \(apns.stats().resentWithoutStatus), connections \(stats.connectionsAccepted)")
            #expect(stats.settingsUpdatesSent >= 1)
            #expect(statuses.count == ids.count && statuses.allSatisfy { $0 == 200 })
            #expect(ids.allSatisfy { (stats.apnsSendsByID[$0] ?? 0) >= 1 }, "none lost")
            let duplicates = ids.filter { (stats.apnsSendsByID[$0] ?? 0) > 1 }.count
            #expect(duplicates <= stats.apnsUnansweredIDs.count, "a duplicate only where an answer was lost")
        }
    }

    @Test("an oversized answer: status and reason kept, body cut at 64 KB, extra headers dropped, the connection reused")
    func oversizedAnswerIsCut() async throws {
        // 150 extra lines of 49 bytes: past our 100, within what libcurl 7.88
        // takes (with 500 of them, about 25 KB, curl itself fails the stream:
        // curl 18, no status, a retriable transport error).
        let padding = 3_000_000, extraHeaders = 150
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(provider: "apns", fault: .oversizedAnswer(bodyBytes: padding, headers: extraHeaders), count: 2)]
        }) { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            // No provider token: APNs' 403 MissingProviderToken, with the padding after its JSON.
            let raw = HTTPRequest(method: "POST", url: stack.baseURL + "/3/device/" + LiveStack.deviceToken(1),
                                  headers: [("apns-topic", "com.example.app")], body: Array(#"{"aps":{"alert":"x"}}"#.utf8))
            let cut = try await http.execute(raw)
            #expect(cut.status == 403)
            #expect(cut.body.count == HTTPResponse.maxBodyBytes)
            let json = try JSONValue.parse(cut.body)  // the JSON, then spaces: still one document
            #expect(json["reason"]?.stringValue == "MissingProviderToken")
            let jsonBytes = (cut.body.lastIndex(of: UInt8(ascii: "}")) ?? 0) + 1
            #expect(cut.droppedBodyBytes == jsonBytes + padding - HTTPResponse.maxBodyBytes)
            #expect(cut.headers.count == HTTPResponse.maxHeaders)
            #expect(cut.headers.contains { $0.name == "x-pad-0" } && !cut.headers.contains { $0.name == "x-pad-\(extraHeaders - 1)" })

            // Through the APNs client: the reason of a rejected send is read from the cut body.
            let apns = try stack.makeAPNsClient(http: http)
            var bad = LiveStack.apnsRequest(token: LiveStack.deviceToken(2), apnsID: Self.id())
            bad.headers.removeAll { $0.name == "apns-topic" }
            let rejected = try await apns.send(bad)
            #expect(rejected.status == 400 && rejected.body.count == HTTPResponse.maxBodyBytes)
            #expect(try JSONValue.parse(rejected.body)["reason"]?.stringValue == "MissingTopic")

            // The fault has fired twice: the next answer is whole, on the same connection.
            let whole = try await http.execute(raw)
            #expect(whole.status == 403 && whole.droppedBodyBytes == 0 && whole.droppedHeaders == 0)
            #expect(cut.droppedHeaders == whole.headers.count + extraHeaders - HTTPResponse.maxHeaders, "every line past the first 100 is counted")
            #expect(whole.localPort == cut.localPort, "the oversized answer did not cost the connection")
            #expect(stack.simulator.stats().connectionsAccepted == 1)
        }
    }

    @Test("a header with CR, LF or NUL is never sent: a setup error, no stream opened, the next request goes out")
    func headerInjectionIsNotSent() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let url = stack.baseURL + "/3/device/" + LiveStack.deviceToken(1)
            let body = Array(#"{"aps":{"alert":"x"}}"#.utf8)
            let hostile: [(name: String, value: String)] = [
                ("apns-collapse-id", "a\r\nx-injected: yes"), ("apns-collapse-id", "a\nb"), ("apns-collapse-id", "a\rb"),
                ("apns-collapse-id", "a\u{0}b"), ("x-a\r\nx-injected", "yes"),
            ]
            for header in hostile {
                let request = HTTPRequest(method: "POST", url: url, headers: [("apns-topic", "com.example.app"), header], body: body)
                do {
                    let response = try await http.execute(request)
                    Issue.record("sent anyway: \(header.name.debugDescription) → \(response.status)")
                } catch let error as HTTPError {
                    #expect(error.kind == .setup && !error.isRetriable && error.attempts == 0, "\(error)")
                    #expect(error.message.contains("CR, LF or NUL"), "\(error)")
                }
            }
            #expect(stack.simulator.stats().streamsOpened == 0, "nothing reached the server")
            // A tab and non-ASCII bytes are legal in a field value and go out.
            let fine = HTTPRequest(method: "POST", url: url, headers: [("apns-topic", "com.example.app"), ("x-note", "a\tb é")], body: body)
            #expect(try await http.execute(fine).status == 403)  // no provider token: the server answered
            #expect(stack.simulator.stats().streamsOpened == 1)
        }
    }

    @Test("slow responses past the request timeout: curl 28, no status, retriable, not re-sent (status unknown)")
    func slowResponsesTimeOut() async throws {
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(provider: "apns", fault: .delay(milliseconds: 5000), share: 0.5)]
        }) { stack in
            let http = try stack.makeHTTPClient { $0.requestTimeout = .seconds(2) }
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let ids = (0..<10).map { _ in Self.id() }
            let outcomes = await withTaskGroup(of: (String, Result<Int, any Error>).self) { group in
                for (n, id) in ids.enumerated() {
                    group.addTask {
                        do {
                            return (id, .success(try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: id)).status))
                        } catch { return (id, .failure(error)) }
                    }
                }
                return await group.reduce(into: [(String, Result<Int, any Error>)]()) { $0.append($1) }
            }
            let timedOut = outcomes.compactMap { outcome -> HTTPError? in
                if case .failure(let error) = outcome.1 { return error as? HTTPError } else { return nil }
            }
            #expect(timedOut.count == 5)
            #expect(timedOut.allSatisfy { $0.curlCode == 28 && !$0.statusReceived && $0.isRetriable })
            #expect(outcomes.filter { if case .success(200) = $0.1 { true } else { false } }.count == 5)
            #expect(apns.stats().timedOut == 5)
            #expect(apns.stats().resentWithoutStatus == 0, "a timeout is not re-sent by the client")
            // The simulator did process the timed-out ones: their status is unknown, not "never sent".
            var stats = stack.simulator.stats()
            for _ in 0..<100 where !ids.allSatisfy({ stats.apnsSendsByID[$0] != nil }) {
                try await Task.sleep(for: .milliseconds(100))
                stats = stack.simulator.stats()
            }
            #expect(ids.allSatisfy { stats.apnsSendsByID[$0] == 1 })
        }
    }

    @Test("429 with Retry-After: the answer is returned, the client pauses for it and halves its rate")
    func tooManyRequestsWithRetryAfter() async throws {
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(provider: "fcm", fault: .httpError(status: 429, retryAfterSeconds: 30), count: 1)]
        }) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let fcm = try stack.makeFCMClient(
                http: http, policy: ProviderClientPolicy(rateLimit: .init(ratePerSecond: 1000, burst: 100)))
            let first = try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(1)))
            #expect(first.status == 429)
            #expect(first.header("retry-after") == "30")
            do {
                _ = try await fcm.send(LiveStack.fcmRequest(token: LiveStack.fcmToken(2)))
                Issue.record("expected the limiter to hold the send back")
            } catch let error as ProviderError {
                #expect(error.kind == .rateLimited)
                #expect(error.isRetriable)
                #expect((error.retryAfter ?? .zero) > .seconds(25))
            }
            let stats = fcm.stats()
            #expect(stats.rateLimited == 1)
            #expect(stats.heldBackByRateLimit == 1)
            #expect(stats.currentRate == 500)
            #expect(stack.simulator.stats().fcmAccepted == 0, "nothing reached FCM during the pause")
        }
    }

    @Test("503 storm: the breaker opens, sends fail fast, probes close it when the host is healthy")
    func serviceUnavailableStorm() async throws {
        try await withLiveStack(configure: {
            $0.scenarios = [SimulatorScenario(provider: "apns", fault: .httpError(status: 503, retryAfterSeconds: nil))]
        }) { stack in
            let http = try stack.makeHTTPClient()
            defer { http.shutdown() }
            let policy = ProviderClientPolicy(
                rateLimit: .apnsDefault,
                circuitBreaker: .init(failureRatio: 0.5, minimumRequests: 10, window: .seconds(10), openDuration: .seconds(2), halfOpenProbes: 2))
            let apns = try stack.makeAPNsClient(http: http, policy: policy)
            var answered = 0
            var refused = 0
            for n in 0..<40 {
                do {
                    #expect(try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: Self.id())).status == 503)
                    answered += 1
                } catch let error as ProviderError {
                    #expect(error.kind == .circuitOpen && error.isRetriable && error.host == stack.baseURL)
                    refused += 1
                }
            }
            #expect(answered == 10 && refused == 30)
            #expect(stack.simulator.stats().count("apns", 503, "ServiceUnavailable") == 10, "refused sends never reach the host")
            #expect(apns.circuitState.gaugeValue == 2)
            #expect(!apns.isAcceptingWork)
            #expect(apns.stats().refusedByOpenCircuit == 30)
            // The host recovers; after the cool-down two probes close the circuit.
            try stack.simulator.setScenarios([])
            while !apns.isAcceptingWork { try await Task.sleep(for: .milliseconds(50)) }
            for n in 0..<2 {
                #expect(try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: Self.id())).status == 200)
            }
            #expect(apns.circuitState == .closed)
            #expect(apns.stats().circuitOpenings == 1)
        }
    }

    @Test("outbound HTTP CONNECT proxy from configuration carries every request")
    func connectProxy() async throws {
        try await withLiveStack { stack in
            let proxy = try ConnectProxy()
            defer { proxy.stop() }
            let http = try stack.makeHTTPClient { $0.proxy = "http://127.0.0.1:\(proxy.port)" }
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            for n in 0..<20 {
                #expect(try await apns.send(LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: Self.id())).status == 200)
            }
            let tunnels = proxy.tunnels
            #expect(tunnels.count >= 1)
            #expect(tunnels.allSatisfy { $0 == "127.0.0.1:\(stack.simulator.port)" })
            #expect(stack.simulator.stats().connectionsAccepted == tunnels.count, "every connection came through the proxy")
        }
    }
}
