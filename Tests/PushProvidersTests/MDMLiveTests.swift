import Foundation
import PushCore
import PushHTTP
import PushProviders
import PushSimulator
import PushTestSupport
import Testing

@Suite("MDM push end to end", .serialized)
struct MDMLiveTests {
    static let examplePath = TestEnvironment.schemasDirectory.appendingPathComponent("examples/valid/mdm.json")

    @Test("schemas/examples/valid/mdm.json, translated by APNsTranslator, is accepted over TLS + HTTP/2")
    func mdmExampleIsAccepted() async throws {
        let bytes = Array(try Data(contentsOf: Self.examplePath))
        // The example's created_at (2026-11-21T12:00:00Z) as the clock, so it never ages out.
        let policy = IntakePolicy(now: Date(timeIntervalSince1970: 1_795_262_400))
        let notification = try PushNotification.decode(bytes, policy: policy).get()
        let token = try #require(notification.recipients.first?.token)
        let request = try APNsTranslator.request(
            for: notification, token: token, context: TranslationContext(apnsTopic: nil, fcmProjectID: nil)
        ).get()
        // What Apple's MDM protocol defines: the PushMagic alone, no `aps`.
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"mdm":"5A1F2B3C-PUSHMAGIC"}"#)
        #expect(request.headers.contains { $0.name == "apns-push-type" && $0.value == "mdm" })

        try await withLiveStack { stack in
            let http = try stack.makeHTTPClient(maxConnectionsPerHost: 1)
            defer { http.shutdown() }
            let apns = try stack.makeAPNsClient(http: http)
            let response = try await apns.send(request)
            #expect(response.status == 200, "\(response)")
            #expect(stack.simulator.stats().count("apns", 200, "OK") == 1)
            #expect(stack.simulator.stats().count("apns", 400, "PayloadEmpty") == 0)
        }
    }
}
