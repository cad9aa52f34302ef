import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP CONNECT proxy on 127.0.0.1 (port 0), one thread per tunnel,
/// that records every `host:port` it tunnels to. Test support only.
final class ConnectProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let recorded = Locked<[String]>([])
    private let stopped = Locked(false)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError.socket("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ProxyError.socket("bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `host:port` of every tunnel opened so far.
    var tunnels: [String] { recorded.withLock { $0 } }

    func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in tunnel(client) }.start()
        }
    }

    private func tunnel(_ client: Int32) {
        defer { close(client) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            guard read(client, &byte, 1) == 1, head.count < 8192 else { return }
            head.append(byte)
        }
        let line = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0] == "CONNECT" else { return }
        let target = String(parts[1])
        guard let colon = target.lastIndex(of: ":"), let targetPort = UInt16(target[target.index(after: colon)...]) else { return }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard upstream >= 0 else { return }
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(String(target[..<colon]))
        address.sin_port = targetPort.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        recorded.withLock { $0.append(target) }
        let established = Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)
        guard write(client, established, established.count) == established.count else { return }
        pump(client, upstream)
    }

    /// Copies bytes both ways until either side closes.
    private func pump(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopped.withLock({ $0 }) {
            guard poll(&fds, 2, 500) >= 0 else { return }
            for index in 0..<2 where fds[index].revents != 0 {
                let from = fds[index].fd
                let to = index == 0 ? b : a
                let count = read(from, &buffer, buffer.count)
                guard count > 0 else { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { raw -> Int in
                        guard let base = raw.baseAddress else { return -1 }
                        return write(to, base + sent, count - sent)
                    }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }

    enum ProxyError: Error { case socket(String) }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
