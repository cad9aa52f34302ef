import Testing

@testable import PushHTTP

/// The per-host admission state machine, without curl.
@Suite("HostAdmission")
struct HostAdmissionTests {
    static let host = "https://127.0.0.1:443"
    static func transfer(_ priority: HTTPRequestPriority = .urgent) -> Transfer {
        Transfer(request: HTTPRequest(method: "POST", url: host + "/3/device/x", priority: priority))
    }

    @Test("an urgent transfer waits behind no background one for its host's next slot")
    func urgentFirst() {
        var admission = HostAdmission(limit: 2)
        admission.connectionsChanged(Self.host, settled: 1)
        let busy = admission.tryAdmit(Self.host) && admission.tryAdmit(Self.host)
        #expect(busy)
        // A campaign's requests queue for the host's two slots, then a one-time code arrives.
        let campaign = (0..<100).map { _ in Self.transfer(.background) }
        for transfer in campaign { admission.enqueue(transfer) }
        let code = Self.transfer(.urgent), chat = Self.transfer(.urgent)
        admission.enqueue(code)
        admission.enqueue(chat)
        let order = (0..<4).map { _ in admission.release(Self.host) }
        #expect(order[0] === code, "the next free slot goes to the urgent request")
        #expect(order[1] === chat)
        #expect(order[2] === campaign[0] && order[3] === campaign[1], "then the campaign, in its order")
        // One turned back keeps its place among its own priority, behind any urgent one.
        admission.deferToFront(campaign[1])
        let late = Self.transfer(.urgent)
        admission.enqueue(late)
        admission.connectionsChanged(Self.host, settled: 2)
        let x = admission.admitWaiting(Self.host), y = admission.release(Self.host)
        #expect(x === late && y === campaign[1])
        let removed = admission.removeWaiting(campaign[50])
        #expect(removed)
        let left = admission.drainWaiting()
        #expect(left.count == 97 && left.first === campaign[2])
    }

    @Test("one transfer until a connection answered, then up to the limit")
    func probeFirst() {
        var admission = HostAdmission(limit: 3)
        let probe = admission.tryAdmit(Self.host)
        let second = admission.tryAdmit(Self.host)
        #expect(probe && !second)
        let waiting = (0..<4).map { _ in Self.transfer() }
        for transfer in waiting { admission.enqueue(transfer) }
        let beforeAnswer = admission.admitWaiting(Self.host)
        #expect(beforeAnswer == nil)
        admission.connectionsChanged(Self.host, settled: 1)
        let a = admission.admitWaiting(Self.host)
        let b = admission.admitWaiting(Self.host)
        let c = admission.admitWaiting(Self.host)
        #expect(a === waiting[0] && b === waiting[1] && c == nil)
        #expect(admission.inFlight(Self.host) == 3)
        // A finished transfer hands its slot to the next in line.
        let next = admission.release(Self.host)
        #expect(next === waiting[2])
        #expect(admission.inFlight(Self.host) == 3)
    }

    @Test("a transfer turned back from an unsettled connection keeps its place and holds the host")
    func turnedBack() {
        var admission = HostAdmission(limit: 10)
        admission.connectionsChanged(Self.host, settled: 1)
        let first = Self.transfer(), second = Self.transfer()
        let admitted = admission.tryAdmit(Self.host) && admission.tryAdmit(Self.host)
        #expect(admitted)
        admission.deferToFront(second)
        #expect(admission.inFlight(Self.host) == 1)
        // Held: nothing new goes to curl, the turned-back one waits first.
        let whileHeld = admission.tryAdmit(Self.host)
        #expect(!whileHeld)
        let later = Self.transfer()
        admission.enqueue(later)
        let heldWaiting = admission.admitWaiting(Self.host)
        #expect(heldWaiting == nil)
        // The new connection answered: the queue moves again, in order.
        admission.connectionsChanged(Self.host, settled: 2)
        let x = admission.admitWaiting(Self.host)
        let y = admission.admitWaiting(Self.host)
        #expect(x === second && y === later)
        _ = first
    }

    @Test("a host is never held with nothing of it in curl")
    func neverHeldEmpty() {
        var admission = HostAdmission(limit: 10)
        admission.connectionsChanged(Self.host, settled: 1)
        let admitted = admission.tryAdmit(Self.host)
        #expect(admitted)
        let only = Self.transfer()
        admission.deferToFront(only)
        let again = admission.admitWaiting(Self.host)
        #expect(again === only)
    }

    @Test("a host with nothing in curl, nothing waiting and no connection leaves no entry")
    func idleHostsAreForgotten() {
        var admission = HostAdmission(limit: 10)
        // 1,000 hosts (Web Push endpoints on new subdomains), each used once.
        var kept: [Int] = []
        for n in 0..<1_000 {
            let host = "https://wns\(n).notify.windows.com"
            let admitted = admission.tryAdmit(host)
            admission.connectionsChanged(host, settled: 1)  // its connection answered
            let next = admission.release(host)
            kept.append(admission.hostCount)  // 1: kept while its connection is open
            admission.connectionsChanged(host, settled: 0)  // the connection closed
            if !admitted || next != nil { Issue.record("host \(n): admitted \(admitted), next \(String(describing: next))") }
        }
        #expect(kept == Array(repeating: 1, count: 1_000))
        #expect(admission.hostCount == 0)
        // Kept while one waits, even with no connection; forgotten once it is taken back.
        let waiting = Self.transfer()
        let first = admission.tryAdmit(Self.host)
        admission.enqueue(waiting)
        let handedOver = admission.release(Self.host)
        let whileInCurl = admission.hostCount
        let last = admission.release(Self.host)
        #expect(first && handedOver === waiting && whileInCurl == 1 && last == nil)
        #expect(admission.hostCount == 0)
        let cancelled = Self.transfer()
        let again = admission.tryAdmit(Self.host)
        admission.enqueue(cancelled)
        admission.connectionsChanged(Self.host, settled: 0)
        let withBoth = admission.hostCount  // a transfer in curl and one waiting
        let removed = admission.removeWaiting(cancelled)
        let afterRemoval = admission.hostCount  // still one in curl
        let end = admission.release(Self.host)
        #expect(again && withBoth == 1 && removed && afterRemoval == 1 && end == nil)
        #expect(admission.hostCount == 0)
        // A forgotten host starts again as a new one: one transfer until a connection answers.
        let probe = admission.tryAdmit(Self.host), second = admission.tryAdmit(Self.host)
        #expect(probe && !second)
    }
}
