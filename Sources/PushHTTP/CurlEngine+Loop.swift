import CCurl
import CShims
import Logging
import PushThreads

extension CurlEngine {
    typealias Completion = (Transfer, Result<HTTPResponse, HTTPError>)

    /// The loop thread's body; returns after shutdown, with every transfer failed.
    func runLoop() {
        logger.debug("http.loop started", metadata: ["http.max_connections": "\(configuration.maxConnectionsPerHost)"])
        var iterations = 0
        while let work = takeWork() {
            iterations += 1
            var completions: [Completion] = []
            for transfer in work.new {
                if admission.tryAdmit(transfer.hostKey) {
                    start(transfer, into: &completions)
                } else {
                    admission.enqueue(transfer)
                }
            }
            for transfer in work.cancelled { cancel(transfer, into: &completions) }
            let performCode = multi.perform()
            if performCode != CURLM_OK {
                logger.error("curl_multi_perform failed", metadata: ["curl.mcode": "\(performCode.rawValue)"])
            }
            while let done = multi.nextDone() {
                guard let transfer = active[done.easy], let easy = transfer.easy else { continue }
                if transfer.deferred, done.code == CURLE_ABORTED_BY_CALLBACK {
                    turnBack(transfer, easy)
                    continue
                }
                let (result, connects) = complete(transfer, easy, code: done.code)
                completions.append((transfer, result))
                finish(transfer, easy, result: result, newConnections: connects, into: &completions)
            }
            if multi.sockets.connections.hasChanges { admitAfterConnectionChanges(into: &completions) }
            // Resume outside the engine lock; continuations hop to their executors,
            // a serial executor woken once for all of them.
            if !completions.isEmpty {
                SerialTaskExecutor.holdingWakes {
                    for (transfer, result) in completions { transfer.resume(with: result) }
                }
            }
            _ = multi.poll(timeoutMs: 1000)
        }
        failEverything()
        logger.debug(
            "http.loop stopped",
            metadata: ["http.loop_iterations": "\(iterations)", "http.wakeups": "\(wakeupCount)", "http.submitted": "\(stats().submitted)"])
    }

    /// Hands an admitted transfer to curl, or fails it (and admits the next):
    /// a transfer whose gate closed while it waited is withdrawn, never sent.
    private func start(_ transfer: Transfer, into completions: inout [Completion]) {
        var next: Transfer? = transfer
        while let transfer = next {
            next = nil
            let withdrawn = transfer.request.gate?.closedReason.map { HTTPError.withdrawn($0) }
            guard let error = withdrawn ?? addToMulti(transfer) else { return }
            record(transfer, .failure(error), newConnections: 0)
            completions.append((transfer, .failure(error)))
            next = admission.release(transfer.hostKey)
        }
    }

    /// Configures a handle for `transfer` and adds it; the error if that failed.
    private func addToMulti(_ transfer: Transfer) -> HTTPError? {
        let easy: CurlEasyHandle
        do throws(HTTPError) {
            if let recycled = freeHandles.popLast() {
                easy = recycled
            } else {
                easy = try CurlEasyHandle()
                try setFixedOptions(easy)
            }
            do throws(HTTPError) {
                try transfer.configure(easy, connections: multi.sockets.connections)
            } catch {
                easy.needsFullReset = true
                recycle(easy)
                throw error
            }
        } catch {
            transfer.releaseFromCurl()
            return error
        }
        let code = multi.add(easy)
        guard code == CURLM_OK else {
            recycle(easy)
            transfer.releaseFromCurl()
            return HTTPError.multi(code: code.rawValue, "curl_multi_add_handle")
        }
        transfer.easy = easy
        active[easy.raw] = transfer
        return nil
    }

    /// curl tried to send `transfer` on a connection whose first answer has not
    /// arrived yet (its SETTINGS unknown) and the PREREQ callback turned it
    /// back unsent: out of curl, to the head of its host's queue.
    private func turnBack(_ transfer: Transfer, _ easy: CurlEasyHandle) {
        active.removeValue(forKey: easy.raw)
        multi.remove(easy)
        if transfer.attempts > 0 { easy.needsFullReset = true }  // see `finish`
        recycle(easy)
        transfer.easy = nil
        transfer.releaseFromCurl()
        transfer.deferred = false
        transfer.leaveSlotKeepingLast()
        admission.deferToFront(transfer)
    }

    /// A connection answered for the first time or closed: hosts may take more now.
    private func admitAfterConnectionChanges(into completions: inout [Completion]) {
        let connections = multi.sockets.connections
        for host in connections.takeChanges() {
            admission.connectionsChanged(host, settled: connections.settledConnections(host))
            while let next = admission.admitWaiting(host) { start(next, into: &completions) }
        }
    }

    /// A cancelled task's transfer: take it out of curl or out of the host queue.
    private func cancel(_ transfer: Transfer, into completions: inout [Completion]) {
        let error = HTTPError.cancelled(statusReceived: transfer.statusReceived)
        if let easy = transfer.easy, active[easy.raw] === transfer {
            completions.append((transfer, .failure(error)))
            finish(transfer, easy, result: .failure(error), newConnections: 0, into: &completions)
        } else if admission.removeWaiting(transfer) {
            record(transfer, .failure(error), newConnections: 0)
            completions.append((transfer, .failure(error)))
        }
    }

    /// Builds the outcome of a transfer curl reported as done.
    private func complete(
        _ transfer: Transfer, _ easy: CurlEasyHandle, code: CURLcode
    ) -> (Result<HTTPResponse, HTTPError>, Int) {
        let connects = easy.infoLong(CURLINFO_NUM_CONNECTS)
        let responseCode = easy.infoLong(CURLINFO_RESPONSE_CODE)
        let statusReceived = transfer.statusReceived || responseCode >= 200
        guard code == CURLE_OK else {
            var partial = HTTPResponse(
                status: responseCode > 0 ? responseCode : transfer.status, headers: transfer.headers,
                body: transfer.body, httpVersion: Self.version(easy.infoLong(CURLINFO_HTTP_VERSION)),
                localPort: easy.infoLong(CURLINFO_LOCAL_PORT))
            partial.droppedBodyBytes = transfer.droppedBodyBytes
            partial.droppedHeaders = transfer.droppedHeaders
            var error = HTTPError.transfer(
                code: Int32(bitPattern: code.rawValue), detail: easy.errorText,
                statusReceived: statusReceived, partialResponse: partial)
            error.attempts = transfer.attempts
            error.resends = transfer.resends
            logger.debug(
                "http.transfer failed",
                metadata: [
                    "http.url": "\(transfer.request.url)", "curl.code": "\(code.rawValue)",
                    "http.status_received": "\(statusReceived)",
                ])
            return (.failure(error), connects)
        }
        var response = HTTPResponse(
            status: responseCode > 0 ? responseCode : transfer.status,
            headers: transfer.headers, body: transfer.body,
            httpVersion: Self.version(easy.infoLong(CURLINFO_HTTP_VERSION)),
            localPort: easy.infoLong(CURLINFO_LOCAL_PORT))
        response.resends = transfer.resends
        response.droppedBodyBytes = transfer.droppedBodyBytes
        response.droppedHeaders = transfer.droppedHeaders
        if transfer.droppedBodyBytes > 0 || transfer.droppedHeaders > 0 {
            logger.warning(
                "http.response over the size limits; the rest was read and dropped",
                metadata: [
                    "http.url": "\(transfer.request.url)", "http.status": "\(response.status)",
                    "http.body_bytes_dropped": "\(transfer.droppedBodyBytes)", "http.headers_dropped": "\(transfer.droppedHeaders)",
                ])
        }
        return (.success(response), connects)
    }

    /// Takes the transfer out of curl, recycles its handle, drops curl's
    /// reference, records the outcome and admits the host's next transfer.
    ///
    /// libcurl 7.88 counts its own re-sends per easy handle and resets that
    /// count only in `curl_easy_reset`: a recycled handle that had re-sent
    /// five times in its life would give the next transfer's first re-send up
    /// ("Connection died, tried 5 times before giving up"). So a handle whose
    /// transfer was re-sent by curl, or failed, is reset before its next use.
    private func finish(
        _ transfer: Transfer, _ easy: CurlEasyHandle, result: Result<HTTPResponse, HTTPError>,
        newConnections: Int, into completions: inout [Completion]
    ) {
        active.removeValue(forKey: easy.raw)
        multi.remove(easy)
        if case .failure = result { easy.needsFullReset = true }
        if transfer.attempts > 1 { easy.needsFullReset = true }
        recycle(easy)
        transfer.easy = nil
        transfer.releaseFromCurl()
        transfer.leaveSlot()
        record(transfer, result, newConnections: newConnections)
        if let next = admission.release(transfer.hostKey) { start(next, into: &completions) }
    }

    /// Keeps a handle for the next request. A POST's handle keeps the fixed
    /// options and only loses the pointers into the finished transfer; any
    /// other handle is reset and gets the fixed options again.
    private func recycle(_ easy: CurlEasyHandle) {
        guard freeHandles.count < Self.maxFreeHandles else { return }
        if easy.needsFullReset {
            easy.reset()
            do throws(HTTPError) {
                try setFixedOptions(easy)
            } catch {
                return  // not reusable: dropped (freed in deinit)
            }
        } else {
            // The header list and body copy die with the transfer.
            _ = try? easy.set(CURLOPT_HTTPHEADER, pointer: nil)
            _ = try? easy.set(CURLOPT_POSTFIELDS, pointer: nil)
        }
        freeHandles.append(easy)
    }

    /// The client's options plus the response callbacks, on a new or reset handle.
    private func setFixedOptions(_ easy: CurlEasyHandle) throws(HTTPError) {
        try easy.applyFixedOptions(configuration)
        try easy.set(CURLOPT_SOCKOPTFUNCTION, sockopt: corkedSocketOpened)
        try easy.set(CURLOPT_SOCKOPTDATA, pointer: multi.sockets.context)
        try easy.set(CURLOPT_CLOSESOCKETFUNCTION, closesocket: corkedSocketClosed)
        try easy.set(CURLOPT_CLOSESOCKETDATA, pointer: multi.sockets.context)
        try easy.set(CURLOPT_WRITEFUNCTION, function: transferWriteCallback)
        try easy.set(CURLOPT_HEADERFUNCTION, function: transferHeaderCallback)
        try easy.set(CURLOPT_PREREQFUNCTION, prereq: transferPrereqCallback)
    }

    /// At shutdown: fail what is queued, waiting for a slot, and in flight.
    private func failEverything() {
        var failed: [(Transfer, HTTPError)] = []
        for transfer in drainAtShutdown() + admission.drainWaiting() {
            record(transfer, .failure(.shutdown()), newConnections: 0)
            failed.append((transfer, .shutdown()))
        }
        for (_, transfer) in active {
            guard let easy = transfer.easy else { continue }
            let error = HTTPError.shutdown(statusReceived: transfer.statusReceived)
            multi.remove(easy)
            recycle(easy)
            transfer.easy = nil
            transfer.releaseFromCurl()
            transfer.leaveSlot()
            record(transfer, .failure(error), newConnections: 0)
            failed.append((transfer, error))
        }
        active.removeAll()
        freeHandles.removeAll()
        for (transfer, error) in failed { transfer.resume(with: .failure(error)) }
        if !failed.isEmpty {
            logger.info("http.shutdown failed pending requests", metadata: ["http.count": "\(failed.count)"])
        }
    }

    static func version(_ raw: Int) -> HTTPVersion {
        switch raw {
        case CURL_HTTP_VERSION_1_0: return .http1_0
        case CURL_HTTP_VERSION_1_1: return .http1_1
        case CURL_HTTP_VERSION_2_0: return .http2
        case CURL_HTTP_VERSION_3: return .http3
        default: return .unknown
        }
    }
}
