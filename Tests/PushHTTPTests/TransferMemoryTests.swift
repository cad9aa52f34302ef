import Testing

@testable import PushHTTP

@Suite("Transfer C memory")
struct TransferMemoryTests {
    @Test("a transfer holds its body copy and header list only while curl has it, not while it waits")
    func cMemoryOnlyWhileAdmitted() throws {
        let request = HTTPRequest(
            method: "POST", url: "https://127.0.0.1:1/3/device/abc", headers: [(name: "apns-topic", value: "t")],
            body: Array("{\"aps\":{}}".utf8))
        let transfer = Transfer(request: request)
        #expect(!transfer.holdsCMemory)  // waiting in the queue: nothing allocated for curl
        try CurlGlobal.ensureInitialised()
        let easy = try CurlEasyHandle()
        let connections = ConnectionBook()
        try transfer.configure(easy, connections: connections)
        #expect(transfer.holdsCMemory)
        try transfer.configure(easy, connections: connections)  // configuring again replaces, never leaks or frees twice
        #expect(transfer.holdsCMemory)
        transfer.releaseCMemory()
        #expect(!transfer.holdsCMemory)
        transfer.releaseCMemory()
        transfer.releaseFromCurl()
    }
}
