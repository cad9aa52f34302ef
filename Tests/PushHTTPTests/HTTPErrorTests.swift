import PushHTTP
import Testing

@Suite("HTTPError")
struct HTTPErrorTests {
    @Test("curl codes map to retriable or not, with curl's text")
    func classification() {
        for code: Int32 in [7, 16, 18, 28, 52, 55, 56, 92] {
            #expect(HTTPError.transfer(code: code, detail: "", statusReceived: false).isRetriable)
        }
        for code: Int32 in [1, 3, 51, 58, 60] {
            #expect(!HTTPError.transfer(code: code, detail: "", statusReceived: false).isRetriable)
        }
        let error = HTTPError.transfer(code: 60, detail: "unable to get local issuer certificate", statusReceived: false)
        #expect(error.message.contains("SSL peer certificate") || error.message.contains("certificate"))
        #expect(error.message.contains("unable to get local issuer certificate"))
        #expect(error.file.hasSuffix("HTTPErrorTests.swift") && error.line > 0)
        #expect(HTTPError.shutdown().isRetriable && HTTPError.shutdown().kind == .shutdown)
        #expect(!HTTPError.cancelled().isRetriable)
    }
}
