import Testing

@testable import PushHTTP

/// The per-host admission state machine, without curl.
@Suite("HostAdmission")
struct HostAdmissionTests {
    static let host = "https://127.0.0.1:443"
    static func transfer() -> Transfer { Transfer(request: HTTPRequest(method: "POST", url: host + "/3/device/x")) }

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
}
