import Foundation
import PushCore
import PushHTTP

extension ProviderGuard {
    /// Sends `request`, re-sending it when it ended with no HTTP status after
    /// GOAWAY, a connection reset or a refused stream (the provider never
    /// answered it; curl surfaces these as codes 16, 18, 52, 55, 56 and 92).
    /// A request that got a status is never re-sent here; if that status was
    /// 2xx it is returned as the answer even when the rest was cut off. A timeout (28) is
    /// not re-sent either: the provider may be processing it, so its status is
    /// unknown, and it is the caller's retry to make. `gate` goes with the
    /// request into the HTTP client, which looks at it right before the
    /// request is handed to libcurl (after any wait for a stream slot);
    /// `priority` decides that wait's order.
    /// - Throws: the last `HTTPError` once the re-sends are used up,
    ///   `ProviderError.gateClosed` for a request its gate withdrew, or any other.
    func execute(_ request: HTTPRequest, on http: HTTP2Client, gate: SendGate? = nil,
                 priority: HTTPRequestPriority = .urgent) async throws -> HTTPResponse {
        // The frame holds little across the await: the decisions are out of line.
        var request = request
        request.gate = gate
        request.priority = priority
        var resends = 0
        while true {
            noteSent()
            do {
                let response = try await http.execute(request)
                noteAnswer(response)
                return response
            } catch {
                switch settle(error, resends: &resends) {
                case .answer(let response): return response
                case .fail(let error): throw error
                case .resend(nil): continue
                case .resend(let delay?): try await Task.sleep(for: delay)
                }
            }
        }
    }

    /// What `execute` does after a try that failed.
    enum Settlement {
        case answer(HTTPResponse)
        case fail(any Error)
        /// Send again, after the delay if any.
        case resend(Duration?)
    }

    /// Feeds an answer's status and Retry-After to the limiter and breaker.
    @inline(never)
    func noteAnswer(_ response: HTTPResponse) {
        if response.resends.total > 0 { noteLibcurlResends(response.resends) }
        noteResponse(status: response.status, retryAfter: RetryAfter.parse(response.header("retry-after"), now: Date()))
    }

    /// Records a failed try and decides: answer (a cut-off 2xx), fail, or re-send.
    @inline(never)
    func settle(_ error: any Error, resends: inout Int) -> Settlement {
        guard let http = error as? HTTPError else {
            noteFailure(error)
            return .fail(error)
        }
        if http.kind == .withdrawn {
            // Never on the wire: not a request sent, nothing about the host.
            state.withLock { $0.stats.requestsSent -= 1 }
            release()
            return .fail(ProviderError.gateClosed(http.message))
        }
        if http.resends.total > 0 { noteLibcurlResends(http.resends) }
        if Self.isResendable(http) && resends < policy.maxResendsWithoutStatus {
            resends += 1
            noteResend(curlCode: http.curlCode)
            // The first re-send goes at once (curl moves to a healthy or new
            // connection); later ones back off a little.
            return .resend(resends > 1 ? .milliseconds(5 << min(resends, 7)) : nil)
        }
        // A 2xx arrived and only the rest of the answer was cut off: the
        // provider accepted the request, so it is an answer, not a failure.
        if let partial = http.partialResponse, (200..<300).contains(partial.status) {
            noteResponse(status: partial.status, retryAfter: nil)
            state.withLock { $0.stats.acceptedWithCutOffAnswer += 1 }
            return .answer(partial)
        }
        noteFailure(http)
        return .fail(http)
    }

    /// No status arrived and the connection or stream failed under the request.
    static func isResendable(_ error: HTTPError) -> Bool {
        error.kind == .transfer && !error.statusReceived && resendableCodes.contains(error.curlCode)
    }

    static let resendableCodes: Set<Int32> = [16, 18, 52, 55, 56, 92]
}

/// A campaign's gate withdraws the requests of a cancelled campaign still
/// waiting in the HTTP client, as well as those waiting here.
extension SendGate: HTTPRequestGate {}
