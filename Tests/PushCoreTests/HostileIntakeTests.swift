import Foundation
import XCTest
@testable import PushCore

/// Issue 15: no message can stop the fleet. Each class of hostile input is
/// refused with its own `IntakeReason` (the code the worker records), at the
/// JSON path where it was found, and nothing on the way traps.
final class HostileIntakeTests: XCTestCase {
    static let ios = String(repeating: "ab", count: 32)
    static let id = "6f1c1c1e-2b4a-4c84-9d55-0d6a5c0f2f10"

    /// A valid notification created at the examples' instant; `extra` is
    /// spliced in as further members, `fields` replaces the defaults by key.
    static func message(_ extra: String = "", createdAt: String = "2026-11-21T12:00:00Z",
                        token: String = ios, alert: String = #"{"body":"b"}"#) -> String {
        #"{"schema_version":1,"id":"\#(id)","app":"a","created_at":"\#(createdAt)","recipients":[{"token":"\#(token)","platform":"ios"}],"alert":\#(alert)\#(extra)}"#
    }

    /// The rejection of `bytes` (decoded at the examples' instant), after
    /// checking its reason, path and that no issue text holds a NUL.
    @discardableResult
    func assertRejected(_ bytes: [UInt8], _ reason: IntakeReason, at path: String, kind: IntakeError.Kind? = nil,
                        file: StaticString = #filePath, line: UInt = #line) -> IntakeError? {
        switch PushNotification.decode(bytes, policy: Examples.policy) {
        case .success:
            XCTFail("decoded, expected \(reason)", file: file, line: line)
            return nil
        case .failure(let error):
            XCTAssertEqual(error.reason, reason, "\(error)", file: file, line: line)
            XCTAssertEqual(error.fieldPath, path, "\(error)", file: file, line: line)
            if let kind { XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line) }
            XCTAssertFalse(error.description.unicodeScalars.contains("\u{0}"), "a NUL in the reason text", file: file, line: line)
            XCTAssertFalse(error.description.unicodeScalars.contains("\u{FFFD}"), "input bytes echoed", file: file, line: line)
            return error
        }
    }

    @discardableResult
    func assertRejected(_ text: String, _ reason: IntakeReason, at path: String, kind: IntakeError.Kind? = nil,
                        file: StaticString = #filePath, line: UInt = #line) -> IntakeError? {
        assertRejected(Array(text.utf8), reason, at: path, kind: kind, file: file, line: line)
    }

    func testTheBaseMessageDecodes() throws {
        XCTAssertNoThrow(try PushNotification.decode(Array(Self.message().utf8), policy: Examples.policy).get())
    }

    // MARK: - One test per reason code

    func testNotJSON() {
        assertRejected("{", .notJSON, at: "$", kind: .undecodable)
        assertRejected(String(Self.message().dropLast()), .notJSON, at: "$")
        assertRejected(Self.message() + "x", .notJSON, at: "$")
        assertRejected(Self.message(alert: "{\"body\":\"a\u{1}b\"}"), .notJSON, at: "$")
        // A raw NUL outside any string: not JSON, and the reason shows the byte as hex, not itself.
        let error = assertRejected([0x00], .notJSON, at: "$")
        XCTAssertTrue(error?.detail.contains("0x0") ?? false, "\(String(describing: error))")
    }

    func testNotObject() {
        for text in ["[1]", "\"x\"", "null", "1"] {
            assertRejected(text, .notObject, at: "$", kind: .undecodable)
        }
    }

    func testTooLarge() {
        var bytes = Array(Self.message().utf8)
        bytes += [UInt8](repeating: UInt8(ascii: " "), count: IntakeLimits.maxMessageBytes + 1 - bytes.count)
        assertRejected(bytes, .tooLarge, at: "$", kind: .undecodable)
        bytes.removeLast()
        XCTAssertNoThrow(try PushNotification.decode(bytes, policy: Examples.policy).get(), "exactly 256 KiB is accepted")
    }

    func testTooDeep() {
        let nested = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        assertRejected(Self.message(#","data":{"x":\#(nested)}"#), .tooDeep, at: "$", kind: .undecodable)
        assertRejected(String(repeating: "[", count: 100_000), .tooDeep, at: "$")
    }

    func testDuplicateKey() {
        assertRejected(Self.message(alert: #"{"body":"a","body":"b"}"#), .duplicateKey, at: "alert.body", kind: .undecodable)
        let error = assertRejected(Self.message(#","app":"b""#), .duplicateKey, at: "app")
        XCTAssertEqual(error?.notificationID, UUID(uuidString: Self.id), "the id is salvaged for the rejection row")
    }

    /// The rejection of `text` decoded at the examples' instant; nil when it decodes.
    static func refusal(_ text: String) -> IntakeError? {
        if case .failure(let error) = PushNotification.decode(Array(text.utf8), policy: Examples.policy) { return error }
        return nil
    }

    /// Members as `"k0000000":n`, one per index in `range`.
    static func members(_ range: Range<Int>) -> String {
        range.map { #""k\#(String(repeating: "0", count: 7 - String($0).count))\#($0)":0"# }.joined(separator: ",")
    }

    /// Objects wider than the scanned few keep a set of their keys: a
    /// duplicate is found wherever it stands, at the right path, and distinct
    /// keys are never one, on both sides of the switch-over.
    func testDuplicateKeyInWideObjects() throws {
        let wide = 15_000
        for (first, second) in [(0, 15), (0, 16), (3, 17), (15, 16), (16, 17), (20, 25), (0, wide - 1), (wide - 2, wide - 1)] {
            let keys = Self.members(0..<wide).replacingOccurrences(of: #""k\#(String(format: "%07d", second))":"#,
                                                                  with: #""k\#(String(format: "%07d", first))":"#)
            assertRejected(Self.message(",\"data\":{\(keys)}"), .duplicateKey, at: "data.k\(String(format: "%07d", first))",
                           kind: .undecodable)
        }
        // Distinct keys, narrow and wide, and at the document's top level.
        for count in [1, 15, 16, 17, 40] {
            let n = try PushNotification.decode(Array(Self.message(",\"data\":{\(Self.members(0..<count))}").utf8), policy: Examples.policy).get()
            XCTAssertEqual(n.data.count, count)
        }
        // 15,000 distinct keys: refused, but for the payload's size, not as a duplicate.
        let tooBig = try XCTUnwrap(Self.refusal(Self.message(",\"data\":{\(Self.members(0..<wide))}")))
        XCTAssertEqual(tooBig.reason, .payloadTooLarge, "\(tooBig.detail.prefix(200))")
        assertRejected(Self.message("," + Self.members(0..<wide)), .unknownField, at: "k0000000")
    }

    /// `é` as one scalar and as `e` + U+0301 are two keys (RFC 8259 compares
    /// names by code points), in a narrow object and past the switch-over.
    func testCanonicallyEquivalentKeysAreDistinct() throws {
        let pair = "\"\u{E9}\":1,\"e\u{301}\":2"
        for padding in [0, 30] {
            let extra = padding == 0 ? pair : Self.members(0..<padding) + "," + pair
            let n = try PushNotification.decode(Array(Self.message(",\"data\":{\(extra)}").utf8), policy: Examples.policy).get()
            XCTAssertEqual(n.data.count, padding + 2)
        }
        assertRejected(Self.message(",\"data\":{\(Self.members(0..<30)),\"\u{E9}\":1,\"\u{E9}\":2}"), .duplicateKey, at: "data.\u{E9}")
    }

    /// The text of a rejection is bounded whatever the message: 15,000
    /// unknown keys or one key of 200 KB give a reason, log line and
    /// dead-letter header of about 2 KB that says how many issues it left out.
    func testRejectionTextIsBounded() throws {
        let many = assertRejected(Self.message("," + Self.members(0..<15_000)), .unknownField, at: "k0000000")
        let error = try XCTUnwrap(many)
        XCTAssertEqual(error.issues.count, 15_000, "every issue is kept; only the text is cut")
        XCTAssertLessThanOrEqual(error.detail.utf8.count, IntakeError.maxDetailBytes + 40)
        XCTAssertTrue(error.detail.hasSuffix("; and \(15_000 - IntakeError.maxDetailedIssues) more issues"), error.detail)
        XCTAssertTrue(error.detail.hasPrefix("k0000000: unknown field; k0000001: unknown field"), error.detail)

        let longKey = String(repeating: "\u{E9}", count: 100_000)
        let long = try XCTUnwrap(Self.refusal(Self.message(",\"\(longKey)\":1")))
        XCTAssertEqual(long.reason, .unknownField)
        XCTAssertEqual(long.fieldPath.utf8.count, IntakeError.maxPathBytes - 1, "126 é and the … (3 bytes)")
        XCTAssertTrue(long.fieldPath.hasSuffix("\u{E9}…"), "cut on a scalar boundary")
        XCTAssertLessThanOrEqual(long.detail.utf8.count, IntakeError.maxDetailBytes)
        XCTAssertTrue(long.detail.hasSuffix("…"), "one issue, cut, and nothing left out to count")

        // One Character of 200 KB ("a" and 100,000 combining accents): cut by its bytes.
        let cluster = "a" + String(repeating: "\u{301}", count: 100_000)
        let clustered = try XCTUnwrap(Self.refusal(Self.message(",\"\(cluster)\":1")))
        XCTAssertLessThanOrEqual(clustered.fieldPath.utf8.count, IntakeError.maxPathBytes)
        XCTAssertLessThanOrEqual(clustered.detail.utf8.count, IntakeError.maxDetailBytes)
        XCTAssertLessThanOrEqual(clustered.description.utf8.count, IntakeError.maxDetailBytes + 40)

        // A short list is spelled out whole, as before.
        let few = try XCTUnwrap(Self.refusal(Self.message(#","x":1,"y":2"#)))
        XCTAssertEqual(few.detail, "x: unknown field; y: unknown field")
    }

    /// A device token is at most 2048 bytes, what the ledger's key can hold:
    /// one byte more is refused at intake, before any send.
    func testATokenLongerThanTheLedgerKeyIsRefused() throws {
        let android = { (n: Int) in Self.message().replacingOccurrences(of: #""token":"\#(Self.ios)","platform":"ios""#,
                                                                         with: #""token":"\#(String(repeating: "t", count: n))","platform":"android""#) }
        XCTAssertNoThrow(try PushNotification.decode(Array(android(IntakeLimits.maxTokenBytes).utf8), policy: Examples.policy).get())
        let error = assertRejected(android(IntakeLimits.maxTokenBytes + 1), .invalidValue, at: "recipients[0].token")
        XCTAssertTrue(error?.detail.contains("longer than 2048 bytes") ?? false, "\(String(describing: error))")
    }

    func testByteOrderMark() {
        assertRejected([0xEF, 0xBB, 0xBF] + Array(Self.message().utf8), .byteOrderMark, at: "$", kind: .undecodable)
        assertRejected([0xFF, 0xFE] + Array(Self.message().utf8), .byteOrderMark, at: "$")
        assertRejected([0xFE, 0xFF] + Array(Self.message().utf8), .byteOrderMark, at: "$")
    }

    func testInvalidUTF8() {
        let bad: [[UInt8]] = [
            [0xC3, 0x28],              // a lead byte without its continuation
            [0x80],                    // a lone continuation byte
            [0xC0, 0xAF],              // overlong "/"
            [0xE0, 0x80, 0xAF],        // overlong, three bytes
            [0xED, 0xA0, 0x80],        // a UTF-16 surrogate encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],  // no such lead byte
            [0xFF],
            [0xE2, 0x82],              // truncated before the closing quote
        ]
        let prefix = Array(#"{"schema_version":1,"id":"\#(Self.id)","app":"a","created_at":"2026-11-21T12:00:00Z","recipients":[{"token":"ab"#.utf8)
        let suffix = Array(#"","platform":"ios"}],"alert":{"body":"b"}}"#.utf8)
        for sequence in bad {
            let error = assertRejected(prefix + sequence + suffix, .invalidUTF8, at: "recipients[0].token", kind: .undecodable)
            XCTAssertEqual(error?.notificationID, UUID(uuidString: Self.id), "\(sequence)")
            XCTAssertEqual(error?.app, "a")
        }
        // In a key, after an escape, and as a lone surrogate escape.
        let key = Array(#"{"schema_version":1,"data":{"k"#.utf8) + [0xFF] + Array(#"":1}}"#.utf8)
        assertRejected(key, .invalidUTF8, at: "data")
        let escaped = Array(#"{"data":{"k":"\n"#.utf8) + [0xC3] + Array(#""}}"#.utf8)
        assertRejected(escaped, .invalidUTF8, at: "data.k")
        assertRejected(Self.message(alert: #"{"body":"\ud800"}"#), .invalidUTF8, at: "alert.body")
        assertRejected(Self.message(alert: #"{"body":"\udc00\u0041"}"#), .invalidUTF8, at: "alert.body")
        // Well-formed multi-byte text still decodes, in place and after escapes.
        let text = "é中😀\u{10FFFF}"
        let n = try? PushNotification.decode(Array(Self.message(alert: #"{"body":"\#(text)","title":"\n\#(text)\ud83d\ude00"}"#).utf8),
                                             policy: Examples.policy).get()
        XCTAssertEqual(n?.alert?.body, text)
        XCTAssertEqual(n?.alert?.title, "\n\(text)😀")
    }

    func testNulCharacter() {
        let error = assertRejected(Self.message(token: #"ab\u0000cd"#), .nulCharacter, at: "recipients[0].token", kind: .undecodable)
        XCTAssertEqual(error?.notificationID, UUID(uuidString: Self.id))
        assertRejected(Self.message(#","data":{"k":"v\u0000"}"#), .nulCharacter, at: "data.k")
        assertRejected(Self.message(#","data":{"k":["a","\u0000"]}"#), .nulCharacter, at: "data.k[1]")
        assertRejected(Self.message(#","data":{"k\u0000":"v"}"#), .nulCharacter, at: "data")
        assertRejected(Self.message(#","apns":{"aps":{"x":{"y":"\u0000"}}}"#), .nulCharacter, at: "apns.aps.x.y")
        // A raw NUL byte inside a string is the same problem.
        let raw = Array(#"{"schema_version":1,"app":"a"#.utf8) + [0x00] + Array(#""}"#.utf8)
        let rawError = assertRejected(raw, .nulCharacter, at: "app")
        XCTAssertNil(rawError?.app, "an app with a NUL is not salvaged")
        // The app itself holding one: the rejection row gets no app rather than a NUL.
        let app = #"{"schema_version":1,"id":"\#(Self.id)","app":"a\u0000","created_at":"2026-11-21T12:00:00Z","recipients":[]}"#
        XCTAssertNil(assertRejected(app, .nulCharacter, at: "app")?.app)
    }

    func testNumberOutOfRange() {
        // The SIGILL of issue 15: Int64.max seconds reached APNsTranslator.expiration.
        assertRejected(Self.message(#","ttl_seconds":9223372036854775807"#), .numberOutOfRange, at: "ttl_seconds", kind: .invalid)
        assertRejected(Self.message(#","ttl_seconds":9223372036854775808"#), .numberOutOfRange, at: "ttl_seconds")
        assertRejected(Self.message(#","ttl_seconds":1e300"#), .numberOutOfRange, at: "ttl_seconds")
        assertRejected(Self.message(#","ttl_seconds":2419201"#), .numberOutOfRange, at: "ttl_seconds")
        assertRejected(Self.message(#","ttl_seconds":-1"#), .numberOutOfRange, at: "ttl_seconds")
        XCTAssertNoThrow(try PushNotification.decode(Array(Self.message(#","ttl_seconds":2419200"#).utf8), policy: Examples.policy).get())
        assertRejected(Self.message(#","badge":2147483648"#), .numberOutOfRange, at: "badge")
        assertRejected(Self.message(#","badge":-1"#), .numberOutOfRange, at: "badge")
        XCTAssertEqual(try? PushNotification.decode(Array(Self.message(#","badge":2147483647"#).utf8), policy: Examples.policy).get().badge,
                       Int(Int32.max))
        assertRejected(Self.message(#","relevance_score":1.5"#), .numberOutOfRange, at: "relevance_score")
        assertRejected(Self.message(#","fcm":{"android":{"notification":{"notification_count":4294967296}}}"#),
                       .numberOutOfRange, at: "fcm.android.notification.notification_count")
        // Beyond any double: refused by the parser, at its path.
        assertRejected(Self.message(#","data":{"x":1e400}"#), .numberOutOfRange, at: "data.x", kind: .undecodable)
        assertRejected(Self.message(#","data":{"x":[-1e999]}"#), .numberOutOfRange, at: "data.x[0]")
    }

    func testCreatedAtOutOfWindow() {
        let error = assertRejected(Self.message(createdAt: "0001-01-01T00:00:00Z"), .createdAtOutOfWindow, at: "created_at", kind: .invalid)
        XCTAssertTrue(error?.detail.contains("2026-10-24T12:00:00.000Z ... 2026-11-21T13:00:00.000Z") ?? false, "\(String(describing: error))")
        assertRejected(Self.message(createdAt: "9999-12-31T23:59:59Z"), .createdAtOutOfWindow, at: "created_at")
        assertRejected(Self.message(createdAt: "2026-11-21T13:00:01Z"), .createdAtOutOfWindow, at: "created_at")
        assertRejected(Self.message(createdAt: "2026-10-24T11:59:59Z"), .createdAtOutOfWindow, at: "created_at")
        for inside in ["2026-10-24T12:00:00Z", "2026-11-21T13:00:00Z", "2026-11-21T12:30:00+01:00"] {
            XCTAssertNoThrow(try PushNotification.decode(Array(Self.message(createdAt: inside).utf8), policy: Examples.policy).get(), inside)
        }
        // The convenience overload measures against the clock now: years 0001 and 9999 never pass.
        for year in ["0001", "9999"] {
            guard case .failure(let e) = PushNotification.decode(Array(Self.message(createdAt: "\(year)-06-01T00:00:00Z").utf8)) else {
                XCTFail(year); continue
            }
            XCTAssertEqual(e.reason, .createdAtOutOfWindow)
        }
        // A wider policy admits what the default refuses.
        let wide = IntakePolicy(now: Examples.policy.now, maxAge: 400 * 86_400, maxFuture: 86_400)
        XCTAssertNoThrow(try PushNotification.decode(Array(Self.message(createdAt: "2026-01-01T00:00:00Z").utf8), policy: wide).get())
        XCTAssertEqual(IntakePolicy(now: Examples.policy.now), Examples.policy)
        XCTAssertEqual(Examples.policy.maxAge, 2_419_200)
        XCTAssertEqual(Examples.policy.maxFuture, 3_600)
    }

    func testExpiresAtOutOfWindow() {
        assertRejected(Self.message(#","expires_at":"2026-12-19T12:00:01Z""#), .expiresAtOutOfWindow, at: "expires_at", kind: .invalid)
        assertRejected(Self.message(#","expires_at":"9999-12-31T23:59:59Z""#), .expiresAtOutOfWindow, at: "expires_at")
        assertRejected(Self.message(#","expires_at":"2026-11-21T11:59:59Z""#), .expiresAtOutOfWindow, at: "expires_at")
        XCTAssertNoThrow(try PushNotification.decode(Array(Self.message(#","expires_at":"2026-12-19T12:00:00Z""#).utf8),
                                                     policy: Examples.policy).get())
    }

    func testInvalidTimestamp() {
        assertRejected(Self.message(createdAt: "yesterday"), .invalidTimestamp, at: "created_at", kind: .invalid)
        assertRejected(Self.message(createdAt: "2026-02-30T00:00:00Z"), .invalidTimestamp, at: "created_at")
    }

    func testUnsupportedSchemaVersion() {
        let text = Self.message().replacingOccurrences(of: #""schema_version":1"#, with: #""schema_version":9223372036854775807"#)
        let error = assertRejected(text, .unsupportedSchemaVersion, at: "schema_version", kind: .unsupportedSchemaVersion)
        XCTAssertEqual(error?.notificationID, UUID(uuidString: Self.id))
    }

    func testMissingField() {
        assertRejected(Self.message().replacingOccurrences(of: #""app":"a","#, with: ""), .missingField, at: "app", kind: .invalid)
        assertRejected(Self.message().replacingOccurrences(of: #","platform":"ios""#, with: ""), .missingField, at: "recipients[0].platform")
    }

    func testWrongType() {
        assertRejected(Self.message(#","badge":"1""#), .wrongType, at: "badge", kind: .invalid)
        assertRejected(Self.message(#","badge":1.5"#), .wrongType, at: "badge")
        assertRejected(Self.message(alert: "[]"), .wrongType, at: "alert")
    }

    func testUnknownField() {
        assertRejected(Self.message(#","colour":"red""#), .unknownField, at: "colour", kind: .invalid)
    }

    func testPayloadTooLarge() {
        let body = String(repeating: "x", count: 5000)
        assertRejected(Self.message(alert: #"{"body":"\#(body)"}"#), .payloadTooLarge, at: "$", kind: .invalid)
    }

    func testInvalidValue() {
        assertRejected(Self.message(#","priority":"urgent""#), .invalidValue, at: "priority", kind: .invalid)
    }

    // MARK: - The error's shape

    func testReasonIsTheMostSpecificIssueAndDetailHasNoKindPrefix() throws {
        // priority (invalid_value) comes first, the unknown field second: the specific code wins.
        let text = Self.message(#","priority":"urgent","colour":"red""#)
        guard case .failure(let error) = PushNotification.decode(Array(text.utf8), policy: Examples.policy) else { return XCTFail() }
        XCTAssertEqual(error.reason, .unknownField)
        XCTAssertEqual(error.fieldPath, "colour")
        XCTAssertEqual(error.issues.map(\.code), [.invalidValue, .unknownField])
        XCTAssertFalse(error.detail.hasPrefix("invalid"), error.detail)
        XCTAssertEqual(error.description, "invalid: " + error.detail)
        XCTAssertEqual(IntakeError(kind: .invalid, issues: []).fieldPath, "$")
        XCTAssertEqual(ValidationIssue(path: "x", reason: "y").code, .invalidValue, "the default keeps old call sites compiling")
    }

    func testReasonCodesAreDistinctSnakeCase() {
        let raw = IntakeReason.allKnown.map(\.rawValue)
        XCTAssertEqual(Set(raw).count, raw.count)
        for code in raw {
            XCTAssertTrue(code.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }, code)
        }
        XCTAssertEqual(IntakeReason(rawValue: "too_large"), .tooLarge)
    }

    /// collapse_key, apns.topic and apns.headers.apns-collapse-id become APNs
    /// request headers: a CR or LF would add a header of the producer's choosing
    /// (a second apns-push-type, an apns-id), so a control character is refused
    /// at its path, before any send.
    func testControlCharactersInHeaderTextAreRefused() {
        let injected = #"a\r\napns-push-type: voip"#
        assertRejected(Self.message(#","collapse_key":"\#(injected)""#), .invalidValue, at: "collapse_key")
        assertRejected(Self.message(#","apns":{"topic":"\#(injected)"}"#), .invalidValue, at: "apns.topic")
        assertRejected(Self.message(#","apns":{"headers":{"apns-collapse-id":"\#(injected)"}}"#), .invalidValue,
                       at: "apns.headers.apns-collapse-id")
        // A NUL is refused by the parser already, as anywhere in a message.
        assertRejected(Self.message(#","collapse_key":"k\u0000k""#), .nulCharacter, at: "collapse_key")
        for control in [#"\n"#, #"\r"#, #"\t"#, #"\u0001"#, #"\u001f"#, #"\u007f"#] {
            let error = assertRejected(Self.message(#","collapse_key":"k\#(control)k""#), .invalidValue, at: "collapse_key")
            XCTAssertEqual(error?.detail.contains("control character"), true, control)
        }
        // Non-ASCII text is no control character: still taken, and sent as it is.
        for fine in ["é", "a b", "\u{2028}", "k\u{85}"] {
            let text = Self.message(#","collapse_key":\#(String(decoding: JSONValue.string(fine).encoded(), as: UTF8.self))"#)
            XCTAssertEqual(try? PushNotification.decode(Array(text.utf8), policy: Examples.policy).get().collapseKey, fine)
        }
    }
}
