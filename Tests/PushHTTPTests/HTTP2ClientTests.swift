import Foundation
import PushHTTP
import PushTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("HTTP2Client lifecycle and failures")
struct HTTP2ClientTests {
    @Test("requests after shutdown fail at once with .shutdown")
    func afterShutdown() async throws {
        let http = try HTTP2Client(configuration: .init(), logger: .test)
        http.shutdown()
        http.shutdown()  // idempotent
        await #expect { try await http.execute(HTTPRequest(method: "GET", url: "https://127.0.0.1:1/")) } throws: {
            ($0 as? HTTPError)?.kind == .shutdown
        }
    }

    @Test("a server that accepts TCP but never answers: timeout (curl 28), no status, retriable; shutdown fails the rest")
    func silentServer() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let http = try HTTP2Client(
            configuration: .init(connectTimeout: .milliseconds(400), requestTimeout: .milliseconds(600)), logger: .test)
        let url = "https://127.0.0.1:\(listener.port)/"
        await #expect { try await http.execute(HTTPRequest(method: "GET", url: url)) } throws: { error in
            guard let error = error as? HTTPError else { return false }
            return error.curlCode == 28 && !error.statusReceived && error.isRetriable
        }

        // Requests in flight at shutdown are failed, not left hanging.
        let slow = try HTTP2Client(configuration: .init(requestTimeout: .seconds(30)), logger: .test)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: HTTPError.Kind?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        _ = try await slow.execute(HTTPRequest(method: "GET", url: url))
                        return nil
                    } catch let error as HTTPError {
                        return error.kind
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            slow.shutdown()
            for try await kind in group { #expect(kind == .shutdown) }
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(slow.stats().failed == 20)
        http.shutdown()
    }

    @Test("a cancelled task's request fails with .cancelled")
    func cancellation() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let http = try HTTP2Client(configuration: .init(requestTimeout: .seconds(30)), logger: .test)
        defer { http.shutdown() }
        let url = "https://127.0.0.1:\(listener.port)/"
        let task = Task { try await http.execute(HTTPRequest(method: "GET", url: url)) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        await #expect { try await task.value } throws: { ($0 as? HTTPError)?.kind == .cancelled }
    }

    @Test("bad URLs and connection refusal are clear errors")
    func badTargets() async throws {
        let http = try HTTP2Client(configuration: .init(), logger: .test)
        defer { http.shutdown() }
        await #expect { try await http.execute(HTTPRequest(method: "GET", url: "ftp://127.0.0.1/")) } throws: {
            guard let error = $0 as? HTTPError else { return false }
            return error.curlCode == 1 && !error.isRetriable  // CURLE_UNSUPPORTED_PROTOCOL
        }
        let closed = try SilentListener()
        let port = closed.port
        closed.close()
        await #expect { try await http.execute(HTTPRequest(method: "GET", url: "https://127.0.0.1:\(port)/")) } throws: {
            guard let error = $0 as? HTTPError else { return false }
            return error.curlCode == 7 && error.isRetriable && !error.statusReceived
        }
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes the
/// handshake, then nothing ever answers.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(fd) }
}
