import Foundation
import XCTest
@testable import PushCore

/// Every valid example has a golden file under `schemas/examples/golden/`
/// holding the exact requests (path, ordered headers, body) it translates
/// to, per device token and FCM topic/condition. Bodies are compared byte
/// for byte (the golden body re-encoded compactly must equal what is sent).
/// `PUSHCORE_RECORD_GOLDEN=1 swift test --filter GoldenTests` rewrites them
/// (review the diff: the goldens are checked against Apple's and Google's docs).
final class GoldenTests: XCTestCase {
    static let context = TranslationContext(apnsTopic: "com.example.shop", fcmProjectID: "example-shop", hmsAppID: "104937261")
    static let goldenDirectory = Examples.schemasDirectory.appendingPathComponent("examples/golden")

    static func translate(_ n: PushNotification) -> [(to: String, result: Result<ProviderRequest, TranslationError>)] {
        var out: [(to: String, result: Result<ProviderRequest, TranslationError>)] = []
        for r in n.recipients {
            out.append(("\(r.platform.rawValue):\(r.token)", n.request(for: r, context: context)))
        }
        for target in n.fcmTargets {
            switch target {
            case .topic(let t): out.append(("topic:\(t)", n.request(for: target, context: context)))
            case .condition(let c): out.append(("condition:\(c)", n.request(for: target, context: context)))
            }
        }
        return out
    }

    static func goldenJSON(example: String, _ requests: [(to: String, result: Result<ProviderRequest, TranslationError>)]) throws -> JSONValue {
        var items: [JSONValue] = []
        for (to, result) in requests {
            let request = try result.get()
            items.append(.object([
                ("to", .string(to)),
                ("path", .string(request.path)),
                ("headers", .object(request.headers.map { ($0.name, .string($0.value)) })),
                ("body", try JSONValue.parse(request.body)),
            ]))
        }
        return .object([
            ("example", .string("valid/\(example)")),
            ("context", .object([("apns_topic", .string(context.apnsTopic ?? "")), ("fcm_project_id", .string(context.fcmProjectID ?? ""))])),
            ("requests", .array(items)),
        ])
    }

    func testEveryValidExampleMatchesItsGoldenRequests() throws {
        let record = ProcessInfo.processInfo.environment["PUSHCORE_RECORD_GOLDEN"] == "1"
        let files = try Examples.files("valid")
        var checked = 0
        for file in files {
            let name = file.lastPathComponent
            let n = try PushNotification.decode(Examples.bytes(file), policy: Examples.policy).get()
            let requests = Self.translate(n)
            let goldenURL = Self.goldenDirectory.appendingPathComponent(name)
            if record {
                try FileManager.default.createDirectory(at: Self.goldenDirectory, withIntermediateDirectories: true)
                let text = PrettyJSON.format(try Self.goldenJSON(example: name, requests)) + "\n"
                try Data(text.utf8).write(to: goldenURL)
                continue
            }
            guard let data = try? Data(contentsOf: goldenURL) else { XCTFail("\(name) has no golden file"); continue }
            let golden = try JSONValue.parse(Array(data))
            guard case .array(let want)? = golden["requests"] else { XCTFail("\(name): golden has no requests"); continue }
            XCTAssertEqual(want.count, requests.count, name)
            for (expected, (to, result)) in zip(want, requests) {
                XCTAssertEqual(expected["to"]?.stringValue, to, name)
                let request: ProviderRequest
                do { request = try result.get() } catch { XCTFail("\(name) → \(to): \(error)"); continue }
                XCTAssertEqual(request.path, expected["path"]?.stringValue, "\(name) → \(to)")
                let headers = expected["headers"]?.objectMembers ?? []
                XCTAssertEqual(request.headers.map(\.name), headers.map(\.key), "\(name) → \(to): header names/order")
                XCTAssertEqual(request.headers.map(\.value), headers.map { $0.value.stringValue ?? "?" }, "\(name) → \(to): header values")
                let body = expected["body"]?.encoded() ?? []
                XCTAssertEqual(String(decoding: request.body, as: UTF8.self), String(decoding: body, as: UTF8.self), "\(name) → \(to): body")
                checked += 1
            }
        }
        if !record { XCTAssertGreaterThanOrEqual(checked, 15) }
    }

    func testEveryGoldenFileHasAnExample() throws {
        let goldens = try FileManager.default.contentsOfDirectory(atPath: Self.goldenDirectory.path).filter { $0.hasSuffix(".json") }
        let examples = Set(try Examples.files("valid").map(\.lastPathComponent))
        for golden in goldens { XCTAssertTrue(examples.contains(golden), "\(golden) has no valid example") }
    }
}

/// Indented JSON (keys in order) for golden files a person reviews.
enum PrettyJSON {
    static func format(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { inner + format($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members) where !members.isEmpty:
            return "{\n" + members.map {
                inner + String(decoding: JSONValue.string($0.key).encoded(), as: UTF8.self) + ": " + format($0.value, indent: inner)
            }.joined(separator: ",\n") + "\n\(indent)}"
        default:
            return String(decoding: value.encoded(), as: UTF8.self)
        }
    }
}
