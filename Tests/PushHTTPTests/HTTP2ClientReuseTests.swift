import Foundation
import PushCore
import PushSimulator
import PushTestSupport
import Testing

import CCurl

@testable import PushHTTP
@testable import PushProviders

/// Easy handles keep the client's fixed options between requests and get
/// only each request's own options: nothing of one request may leak into
/// the next one on the same handle.
@Suite("HTTP2Client handle reuse and wake-ups", .serialized)
struct HTTP2ClientReuseTests {
    /// One request at a time on one connection: each reuses the last handle.
    @Test("method, headers and status do not carry over to the next request on a reused handle")
    func nothingCarriesOver() async throws {
        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let request = LiveStack.apnsRequest(token: LiveStack.deviceToken(1), apnsID: UUID().uuidString.lowercased())
            let url = stack.baseURL + request.path
            func post(authorized: Bool) async throws -> HTTPResponse {
                var headers = request.headers
                if authorized { headers.append((name: "authorization", value: "bearer \(try apns.tokens.currentToken())")) }
                return try await http.execute(HTTPRequest(method: "POST", url: url, headers: headers, body: request.body))
            }
            func reason(_ response: HTTPResponse) -> String? {
                (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"] as? String
            }

            let credential = try apns.tokens.currentCredential()
            #expect(credential.authorization == "bearer " + credential.token)
            #expect(try apns.tokens.currentToken() == credential.token)

            let accepted = try await post(authorized: true)
            #expect(accepted.status == 200)
            // The authorization header of the last request is gone.
            let unauthorized = try await post(authorized: false)
            #expect(unauthorized.status == 403 && reason(unauthorized) == "MissingProviderToken")
            // GET and a custom method reach the server as such …
            let get = try await http.execute(HTTPRequest(method: "GET", url: url, headers: request.headers))
            #expect(get.status == 405 && reason(get) == "MethodNotAllowed")
            let put = try await http.execute(HTTPRequest(method: "put", url: url, headers: request.headers, body: request.body))
            #expect(put.status == 405)
            // … and the POST after them is a POST with its body again.
            let again = try await post(authorized: true)
            #expect(again.status == 200)

            // A failure with no answer on a handle that last saw a 200 reports
            // no status (the response code is per transfer, not per handle).
            let closed = try SilentListener()
            let port = closed.port
            closed.close()
            await #expect { try await http.execute(HTTPRequest(method: "POST", url: "https://127.0.0.1:\(port)/", body: [1])) } throws: {
                guard let error = $0 as? HTTPError else { return false }
                return error.curlCode == 7 && !error.statusReceived && (error.partialResponse?.status ?? 0) == 0
            }
            let last = try await post(authorized: true)
            #expect(last.status == 200)
            #expect(http.stats().succeeded == 6 && http.stats().failed == 1)
        }
    }

    @Test("the wake-up gate asks for one wake-up per batch the loop takes")
    func wakeupGate() {
        var gate = WakeupGate()
        var answers: [Bool] = []
        answers.append(gate.queued())
        answers.append(gate.queued())
        answers.append(gate.queued())
        gate.taken()
        answers.append(gate.queued())
        gate.taken()
        gate.taken()
        answers.append(gate.queued())
        answers.append(gate.queued())
        #expect(answers == [true, false, false, true, true, false])
        #expect(gate.sent == 3)
    }

    @Test("2,000 concurrent sends all answered, with fewer wake-ups than requests")
    func batchedWakeups() async throws {
        try await withLiveStack { stack in
            // Two curl threads with a connection each: requests alternate between them.
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 2) { $0.loopThreads = 2 }
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let count = 2000
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<count {
                    group.addTask {
                        try await sendResendingUnanswered(
                            apns, LiveStack.apnsRequest(token: LiveStack.deviceToken(n), apnsID: UUID().uuidString.lowercased())
                        ).0.status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == count && statuses.allSatisfy { $0 == 200 })
            let submitted = http.stats().submitted
            #expect(submitted >= count)
            #expect(http.wakeupCount < submitted)
            // Frames were corked during each perform and every one still got
            // out: the sockets curl reported are exactly the open connections.
            http.shutdown()
            #expect(http.trackedSocketCount >= 1 && http.trackedSocketCount <= 2)
            #expect(stack.simulator.stats().connectionsAccepted == http.stats().connectionsOpened)
        }
    }

    @Test("the header list carries the request's lines and drops curl's defaults it did not set")
    func headerList() {
        func lines(_ headers: [(name: String, value: String)]) -> [String] {
            let list = HeaderList(headers)
            defer { list.deallocate() }
            var result: [String] = []
            var node: UnsafeMutablePointer<curl_slist>? = list.head
            while let current = node {
                result.append(current.pointee.data.map { String(cString: $0) } ?? "<nil>")
                node = current.pointee.next
            }
            return result
        }
        #expect(lines([]) == ["Content-Type:", "Accept:", "Expect:"])
        #expect(
            lines([(name: "apns-id", value: "x"), (name: "Content-TYPE", value: "a/b"), (name: "empty", value: "")])
                == ["apns-id: x", "Content-TYPE: a/b", "empty: ", "Accept:", "Expect:"])
        #expect(lines([(name: "accept", value: "*/*"), (name: "ü", value: "ö")]) == ["accept: */*", "ü: ö", "Content-Type:", "Expect:"])
        #expect(Transfer.hostKey(of: "HTTPS://Api.Push.Apple.com:443/3/device/ABC") == "https://api.push.apple.com:443")
        #expect(Transfer.hostKey(of: "https://127.0.0.1:8443?x=1") == "https://127.0.0.1:8443")
        #expect(Transfer.hostKey(of: "no-scheme") == "no-scheme")
        #expect(Transfer.hostKey(of: "HTTPS://H") == "https://h")
        #expect(Transfer.hostKey(of: "Mailto:X/y") == "mailto:x/y")
        #expect(Transfer.hostKey(of: "https://h#f/x") == "https://h")
    }
}
