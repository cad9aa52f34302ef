import Foundation
@testable import PushCore

/// A rule only the worker can check (schemas/README.md, "What the worker
/// checks beyond the JSON Schemas"). A corpus document that breaks one is
/// accepted by the schema and refused by the worker with this rule's code;
/// that disagreement, and no other, is expected.
enum WorkerOnlyRule: String, CaseIterable {
    case utf8Bytes = "utf8_bytes"
    case messageSize = "message_size"
    case byteOrderMark = "byte_order_mark"
    case duplicateKey = "duplicate_key"
    case nestingDepth = "nesting_depth"
    case nulCharacter = "nul_character"
    case loneSurrogate = "lone_surrogate"
    case numberBeyondDouble = "number_beyond_double"
    case crossField = "cross_field"
    case payloadSize = "payload_size"
    case createdAtWindow = "created_at_window"
    case expiresAtWindow = "expires_at_window"
    case campaignBytes = "campaign_bytes"

    /// The reason code the worker refuses such a document with.
    var reason: IntakeReason {
        switch self {
        case .utf8Bytes, .crossField: .invalidValue
        case .messageSize: .tooLarge
        case .byteOrderMark: .byteOrderMark
        case .duplicateKey: .duplicateKey
        case .nestingDepth: .tooDeep
        case .nulCharacter: .nulCharacter
        case .loneSurrogate: .invalidUTF8
        case .numberBeyondDouble: .numberOutOfRange
        case .payloadSize: .payloadTooLarge
        case .createdAtWindow: .createdAtOutOfWindow
        case .expiresAtWindow: .expiresAtOutOfWindow
        case .campaignBytes: .invalidCampaign
        }
    }
}

/// One document of the agreement corpus.
struct CorpusCase {
    var name: String
    var bytes: [UInt8]
    /// The worker-only rule it breaks, if any: the only licence to disagree.
    var rule: WorkerOnlyRule?
}

/// An intake document as ordered members of raw JSON text, so a case can
/// hold any text at all (`-0`, `1e400`, `2147483647.0`) exactly as written.
struct RawDocument {
    var members: [(key: String, raw: String)]

    func setting(_ key: String, _ raw: String?) -> RawDocument {
        var copy = self
        if let i = copy.members.firstIndex(where: { $0.key == key }) {
            if let raw { copy.members[i].raw = raw } else { copy.members.remove(at: i) }
        } else if let raw {
            copy.members.append((key, raw))
        }
        return copy
    }

    var text: String { "{" + members.map { "\"\($0.key)\":\($0.raw)" }.joined(separator: ",") + "}" }
}

/// Builds the generated half of the agreement corpus: boundary numbers, nulls,
/// lengths in ASCII / 2-byte / 4-byte characters, URLs, timestamps, enums,
/// wrong types, unknown fields, reserved keys, JSON-text rules, web push
/// subscriptions and Huawei tokens, field by field. Deterministic: the same
/// cases, in the same order, every run.
struct SchemaCorpus {
    private(set) var cases: [CorpusCase] = []

    static let iosToken = String(repeating: "ab", count: 32)
    static let androidToken = "fcm-token_AbCdEf0123456789:APA91b"
    static let recipients = #"[{"token":"\#(iosToken)","platform":"ios"},{"token":"\#(androidToken)","platform":"android"}]"#

    /// Valid, with an alert, to one iOS and one Android device.
    static let full = RawDocument(members: [
        ("schema_version", "1"), ("id", #""a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8""#), ("app", #""com.example.shop""#),
        ("created_at", #""2026-11-21T12:00:00Z""#), ("recipients", recipients), ("alert", #"{"title":"Hi","body":"There"}"#),
    ])
    /// `full` without any content: valid only with what a case adds.
    static let bare = full.setting("alert", nil)

    mutating func add(_ slug: String, _ doc: RawDocument, _ rule: WorkerOnlyRule? = nil) {
        add(slug, bytes: Array(doc.text.utf8), rule)
    }

    mutating func add(_ slug: String, bytes: [UInt8], _ rule: WorkerOnlyRule? = nil) {
        let safe = String(slug.map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(60))
        cases.append(CorpusCase(name: "g\(Self.padded(cases.count, 4))-\(safe).json", bytes: bytes, rule: rule))
    }

    static func padded(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(width - s.count, 0)) + s
    }

    /// `value` as a JSON string literal (escapes only what JSON requires).
    static func quoted(_ value: String) -> String {
        String(decoding: JSONValue.string(value).encoded(), as: UTF8.self)
    }

    /// `{"a":{"b":raw}}` for the path `["a", "b"]`.
    static func nest(_ path: [String], _ raw: String) -> String {
        path.reversed().reduce(raw) { inner, key in "{\"\(key)\":\(inner)}" }
    }

    /// `full` with `raw` at `path` (a top-level field, or nested inside one).
    static func at(_ path: [String], _ raw: String?, base: RawDocument = full) -> RawDocument {
        guard let first = path.first else { return base }
        guard let raw else { return base.setting(first, nil) }
        return base.setting(first, path.count == 1 ? raw : nest(Array(path.dropFirst()), raw))
    }

    static func build() -> [CorpusCase] {
        var c = SchemaCorpus()
        c.add("base-full", full)
        c.numbers()
        c.nulls()
        c.lengths()
        c.urls()
        c.timestamps()
        c.enums()
        c.wrongTypes()
        c.unknownFields()
        c.content()
        c.recipientForms()
        c.patterns()
        c.reservedKeys()
        c.textRules()
        c.crossField()
        c.webAndHuawei()
        return c.cases
    }

    // MARK: numbers

    mutating func numbers() {
        typealias Field = (path: [String], min: Int, max: Int, base: RawDocument)
        let soundBase = Self.full
        let integers: [Field] = [
            (["ttl_seconds"], 0, 2_419_200, Self.full), (["badge"], 0, 2_147_483_647, Self.full),
            (["fcm", "android", "notification", "notification_count"], 0, 2_147_483_647, Self.full),
        ]
        for f in integers {
            let name = f.path.joined(separator: ".")
            for (slug, raw) in [("min-1", "\(f.min - 1)"), ("min", "\(f.min)"), ("max", "\(f.max)"), ("max+1", "\(f.max + 1)"),
                                ("max.0", "\(f.max).0"), ("maxe0", "\(f.max)e0"), ("1e20", "1e20"), ("10^20", "100000000000000000000"),
                                ("2^63", "9223372036854775808"), ("-2^63-1", "-9223372036854775809"), ("-0", "-0"), ("-0.0", "-0.0"),
                                ("1.5", "1.5"), ("1e2", "1E2"), ("1e400", "1e400"), ("-1e400", "-1e400"), ("1e-400", "1e-400"),
                                ("max+tiny", "\(f.max).0000000000000001"), ("max+half", "\(f.max).5"), ("string", "\"5\""),
                                ("true", "true"), ("array", "[1]")] {
                add("int-\(name)-\(slug)", Self.at(f.path, raw, base: f.base))
            }
        }
        let sound = { (volume: String) in #"{"name":"a.caf","critical":true,"volume":\#(volume)}"# }
        let numbers: [(name: String, make: (String) -> RawDocument)] = [
            ("relevance_score", { Self.at(["relevance_score"], $0) }),
            ("sound.volume", { soundBase.setting("sound", sound($0)) }),
        ]
        for f in numbers {
            for (slug, raw) in [("-1", "-1"), ("-tiny", "-0.000001"), ("-0", "-0"), ("-0.0", "-0.0"), ("0", "0"), ("0.5", "0.5"),
                                ("1", "1"), ("1.0", "1.0"), ("1+tiny", "1.000001"), ("1+ulp/4", "1.00000000000000001"), ("2", "2"),
                                ("1e20", "1e20"), ("2^63", "9223372036854775808"), ("1e-400", "1e-400"), ("1e400", "1e400"),
                                ("string", "\"0.5\""), ("bool", "false")] {
                add("num-\(f.name)-\(slug)", f.make(raw))
            }
        }
        for raw in ["1", "1.0", "2", "0", "-0", "\"1\"", "true", "1e0", "10e-1"] {
            add("schema_version-\(raw)", Self.full.setting("schema_version", raw))
        }
    }

    // MARK: null

    mutating func nulls() {
        for field in ["expires_at", "ttl_seconds", "priority", "collapse_key", "campaign", "badge", "sound", "category", "thread_id",
                      "content_available", "mutable_content", "interruption_level", "relevance_score", "target_content_id",
                      "image_url", "data", "apns", "fcm"] {
            add("null-\(field)", Self.full.setting(field, "null"))
        }
        add("null-alert-with-badge", Self.full.setting("alert", "null").setting("badge", "1"))
        for field in ["schema_version", "id", "app", "created_at", "recipients"] {
            add("null-required-\(field)", Self.full.setting(field, "null"))
        }
        let nested: [[String]] = [
            ["apns", "push_type"], ["apns", "topic"], ["apns", "aps"], ["apns", "headers"], ["apns", "headers", "apns-priority"],
            ["fcm", "android"], ["fcm", "webpush"], ["fcm", "apns"], ["fcm", "fcm_options"], ["fcm", "android", "priority"],
            ["fcm", "android", "ttl"], ["fcm", "android", "data"], ["fcm", "android", "data", "k"], ["fcm", "android", "notification"],
            ["fcm", "android", "notification", "color"], ["fcm", "android", "notification", "notification_count"],
            ["fcm", "android", "notification", "visibility"], ["fcm", "android", "notification", "sticky"],
            ["fcm", "android", "notification", "title"], ["fcm", "android", "notification", "title_loc_args"],
            ["fcm", "android", "collapse_key"], ["fcm", "android", "direct_boot_ok"],
            ["fcm", "android", "fcm_options", "analytics_label"], ["fcm", "webpush", "fcm_options", "link"],
            ["fcm", "webpush", "headers"], ["fcm", "webpush", "headers", "TTL"], ["fcm", "webpush", "data"],
            ["fcm", "apns", "payload"], ["fcm", "fcm_options", "analytics_label"], ["data", "k"],
        ]
        for path in nested { add("null-\(path.joined(separator: "."))", Self.at(path, "null")) }
        for (slug, alert) in [("title", #"{"title":null,"body":"b"}"#), ("title_loc_key", #"{"title":"t","title_loc_key":null}"#),
                              ("args-alone", #"{"title":"t","title_loc_args":null}"#),
                              ("key-null-args-set", #"{"title":"t","title_loc_args":["a"],"title_loc_key":null}"#),
                              ("launch_image", #"{"title":"t","launch_image":null}"#), ("args-item", #"{"title":"t","body_loc_key":"k","body_loc_args":[null]}"#)] {
            add("null-alert.\(slug)", Self.full.setting("alert", alert))
        }
        for (slug, sound) in [("critical", #"{"name":"a","critical":null}"#), ("volume", #"{"name":"a","volume":null}"#), ("name", #"{"name":null}"#)] {
            add("null-sound.\(slug)", Self.full.setting("sound", sound))
        }
        for (slug, recipient) in [("token", #"{"token":null,"platform":"ios"}"#), ("platform", #"{"token":"t","platform":null}"#),
                                  ("user_id", #"{"user_id":null}"#), ("extra", #"{"user_id":"u","topic":null}"#), ("item", "null")] {
            add("null-recipient.\(slug)", Self.full.setting("recipients", "[\(recipient)]"))
        }
        // null is absent: as the only content, nothing.
        for (field, raw) in [("badge", "null"), ("sound", "null"), ("data", "null"), ("content_available", "null"),
                             ("alert", "null"), ("apns", #"{"aps":null}"#), ("apns", #"{"push_type":null}"#)] {
            add("null-only-content-\(field)-\(raw.count)", Self.bare.setting(field, raw))
        }
        add("null-ttl-with-expires", Self.full.setting("ttl_seconds", "null").setting("expires_at", #""2026-11-22T12:00:00Z""#))
        add("null-expires-with-ttl", Self.full.setting("expires_at", "null").setting("ttl_seconds", "60"))
    }

    // MARK: lengths

    mutating func lengths() {
        typealias Field = (name: String, min: Int, max: Int, make: (String) -> RawDocument)
        let fields: [Field] = [
            ("app", 1, 255, { Self.full.setting("app", Self.quoted($0)) }),
            ("collapse_key", 1, 64, { Self.full.setting("collapse_key", Self.quoted($0)) }),
            ("campaign", 1, 128, { Self.full.setting("campaign", Self.quoted($0)) }),
            ("user_id", 1, 255, { Self.full.setting("recipients", #"[{"user_id":\#(Self.quoted($0))}]"#) }),
            ("apns.topic", 1, 255, { Self.at(["apns", "topic"], Self.quoted($0)) }),
            ("apns-collapse-id", 1, 64, { Self.at(["apns", "headers", "apns-collapse-id"], Self.quoted($0)) }),
            ("token", 1, 2048, { Self.full.setting("recipients", #"[{"token":\#(Self.quoted($0)),"platform":"android"}]"#) }),
            ("condition", 1, 1024, { s in
                // "'<pad>' in topics": one topic, the pad sized so the whole string has the length wanted.
                Self.full.setting("recipients", #"[{"condition":\#(Self.quoted(s))}]"#)
            }),
        ]
        for f in fields {
            // Strings of `chars` characters of `unit`, ending in " in topics" for a condition.
            func text(_ unit: String, _ chars: Int) -> String {
                guard f.name == "condition" else { return String(repeating: unit, count: chars) }
                let tail = "' in topics"
                return "'" + String(repeating: unit, count: max(chars - tail.count - 1, 0)) + tail
            }
            func bytes(_ unit: String, _ totalBytes: Int) -> String {
                // ASCII filler so the UTF-8 length is exactly `totalBytes`.
                let unitBytes = unit.utf8.count
                guard f.name != "condition" else {
                    let fixed = 12  // "'" + "' in topics"
                    let n = (totalBytes - fixed) / unitBytes
                    return "'" + String(repeating: unit, count: n) + String(repeating: "a", count: totalBytes - fixed - n * unitBytes) + "' in topics"
                }
                let n = totalBytes / unitBytes
                return String(repeating: unit, count: n) + String(repeating: "a", count: totalBytes - n * unitBytes)
            }
            if f.name != "condition" { add("len-\(f.name)-empty", f.make("")) }
            add("len-\(f.name)-ascii-max", f.make(text("a", f.max)))
            add("len-\(f.name)-ascii-max+1", f.make(text("a", f.max + 1)))
            // A campaign's bytes have a reason code of their own.
            let bytesRule: WorkerOnlyRule = f.name == "campaign" ? .campaignBytes : .utf8Bytes
            for unit in ["é", "€", "😀"] {
                let slug = "\(f.name)-\(unit.utf8.count)byte"
                add("len-\(slug)-bytes-max", f.make(bytes(unit, f.max)))
                add("len-\(slug)-bytes-max+1", f.make(bytes(unit, f.max + 1)), bytesRule)
                add("len-\(slug)-chars-max", f.make(text(unit, f.max)), bytesRule)
                add("len-\(slug)-chars-max+1", f.make(text(unit, f.max + 1)))
            }
        }
        // A topic is ASCII by its pattern: only its length in characters is at stake.
        for n in [1024, 1025] {
            add("len-topic-ascii-\(n)", Self.full.setting("recipients", #"[{"topic":"\#(String(repeating: "t", count: n))"}]"#))
        }
        add("len-app-200xé", Self.full.setting("app", Self.quoted(String(repeating: "é", count: 200))), .utf8Bytes)
        add("len-user_id-200xé", Self.full.setting("recipients", #"[{"user_id":\#(Self.quoted(String(repeating: "é", count: 200)))}]"#), .utf8Bytes)
        add("len-collapse_key-30-emoji", Self.full.setting("collapse_key", Self.quoted(String(repeating: "😀", count: 30))), .utf8Bytes)
        add("len-collapse_key-escaped-é", Self.full.setting("collapse_key", "\"" + String(repeating: "\\u00e9", count: 32) + "\""))
        add("len-collapse_key-escaped-é+1", Self.full.setting("collapse_key", "\"" + String(repeating: "\\u00e9", count: 33) + "\""), .utf8Bytes)
        // minLength 1, no maximum.
        for path in [["category"], ["thread_id"], ["target_content_id"], ["sound"], ["alert", "title_loc_key"], ["alert", "launch_image"],
                     ["sound", "name"]] {
            let base = path.first == "alert" ? Self.full.setting("alert", #"{"title":"t"}"#) : Self.full
            let doc = { (raw: String) -> RawDocument in
                path.first == "alert" ? base.setting("alert", #"{"title":"t","\#(path[1])":\#(raw)}"#) : Self.at(path, raw, base: base)
            }
            add("len-\(path.joined(separator: "."))-empty", doc("\"\""))
            add("len-\(path.joined(separator: "."))-one", doc("\"x\""))
            add("len-\(path.joined(separator: "."))-emoji", doc("\"😀\""))
        }
        for field in ["title", "subtitle", "body"] {
            add("len-alert.\(field)-empty-beside-title", Self.full.setting("alert", field == "title" ? #"{"title":"","body":"b"}"# : #"{"title":"t","\#(field)":""}"#))
        }
        add("len-token-empty", Self.full.setting("recipients", #"[{"token":"","platform":"android"}]"#))
    }

    // MARK: URLs

    mutating func urls() {
        let samples = ["https://", "http://", "https://a", "http://a/b?c#d", "HTTPS://A.EXAMPLE", "hTtP://x", "ftp://a", "https:// a",
                       "https://a b", "https://a/\u{7F}", "https://a\n", "https:///path", "https://?x", "https://#x", "https://é.example/ü",
                       "//a", "https:/a", "", "https://a\t", "https://user@host:8080/p?q=1", "https://a/ ", "https://a/é", "https:a",
                       "httpss://a", "https://a\u{85}", "https://a\u{A0}b", "https://a\u{2028}", "https://a/\u{1F}", " https://a"]
        for (i, url) in samples.enumerated() {
            add("url-image_url-\(i)", Self.full.setting("image_url", Self.quoted(url)))
        }
        for (i, url) in ["https://", "https://a", "ftp://a", "https://a\n", "https://a/b"].enumerated() {
            add("url-webpush-link-\(i)", Self.at(["fcm", "webpush", "fcm_options", "link"], Self.quoted(url)))
        }
    }

    // MARK: timestamps

    mutating func timestamps() {
        let createdAt: [(String, WorkerOnlyRule?)] = [
            ("2026-11-21T12:00:00Z", nil), ("2026-11-21t12:00:00z", nil), ("2026-11-21 12:00:00Z", nil), ("2026-11-21T11:59:60Z", nil),
            ("2026-11-21T12:00:00.123456789Z", nil), ("2026-11-21T12:00:00.Z", nil), ("2026-11-21T13:00:00+01:00", nil),
            ("2026-11-21T12:00:00-00:00", nil), ("2026-11-21T12:00:00+24:00", nil), ("2026-11-21T12:00:00+0100", nil),
            ("2026-11-21T12:00:00+01:60", nil), ("2026-11-21T12:00:00", nil), ("2026-11-21T12:00Z", nil), ("2026-11-21T24:00:00Z", nil),
            ("2026-11-31T12:00:00Z", nil), ("2026-11-21T12:00:00Z\n", nil), (" 2026-11-21T12:00:00Z", nil), ("2026-11-21T12:00:00,5Z", nil),
            ("2026-11-21T11:00:00.5+01:00", nil), ("\u{662}\u{660}\u{662}\u{666}-11-21T12:00:00Z", nil), ("2026-11-21T12:00:00ZZ", nil),
            ("26-11-21T12:00:00Z", nil), ("2026-1-21T12:00:00Z", nil), ("2026-11-21T12:00:00+01", nil), ("2026-11-21", nil),
            ("2026-10-01T00:00:00Z", .createdAtWindow), ("2026-11-21T14:00:00Z", .createdAtWindow), ("2028-02-29T00:00:00Z", .createdAtWindow),
            ("2027-02-29T00:00:00Z", nil), ("2000-02-29T00:00:00Z", .createdAtWindow), ("1900-02-29T00:00:00Z", nil),
            ("0000-01-01T00:00:00Z", nil), ("0001-01-01T00:00:00Z", .createdAtWindow), ("9999-12-31T23:59:59Z", .createdAtWindow),
            ("2026-11-20T12:00:00Z", nil), ("2026-10-24T12:00:00Z", nil), ("2026-10-24T11:59:59Z", .createdAtWindow),
            ("2026-11-21T13:00:00Z", nil), ("2026-11-21T13:00:00.001Z", .createdAtWindow),
        ]
        for (i, (text, rule)) in createdAt.enumerated() {
            add("ts-created_at-\(i)", Self.full.setting("created_at", Self.quoted(text)), rule)
        }
        let expiresAt: [(String, WorkerOnlyRule?)] = [
            ("2026-11-22T12:00:00Z", nil), ("2026-11-21 13:00:00Z", nil), ("2026-11-21T12:59:60Z", nil), ("2026-11-20T12:00:00Z", .expiresAtWindow),
            ("2027-01-01T00:00:00Z", .expiresAtWindow), ("2026-12-19T12:00:00Z", nil), ("2026-12-19T12:00:00.000001Z", .expiresAtWindow),
            ("2026-11-21T12:00:00Z", nil), ("2026-02-30T00:00:00Z", nil), ("2026-11-22T12:00:00Z\n", nil),
        ]
        for (i, (text, rule)) in expiresAt.enumerated() {
            add("ts-expires_at-\(i)", Self.full.setting("expires_at", Self.quoted(text)), rule)
        }
    }

    // MARK: enums

    mutating func enums() {
        let enums: [(path: [String], good: [String], bad: [String])] = [
            (["priority"], ["high", "normal", "low"], ["urgent", "HIGH", "", "high "]),
            (["interruption_level"], ["passive", "active", "time-sensitive", "critical"], ["loud", "Active", "time_sensitive"]),
            (["apns", "push_type"], ["alert", "location", "voip", "complication", "fileprovider", "pushtotalk", "widgets"], ["urgent", "Alert", ""]),
            (["apns", "headers", "apns-priority"], ["10", "5", "1"], ["7", "10 ", ""]),
            (["fcm", "android", "priority"], ["NORMAL", "HIGH"], ["high", "URGENT"]),
            (["fcm", "android", "notification", "visibility"], ["PRIVATE", "PUBLIC", "SECRET", "VISIBILITY_UNSPECIFIED"], ["ALL"]),
            (["fcm", "android", "notification", "notification_priority"],
             ["PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"], ["TOP", "priority_max"]),
        ]
        for e in enums {
            let name = e.path.joined(separator: ".")
            for v in e.good { add("enum-\(name)-\(v)", Self.at(e.path, Self.quoted(v))) }
            for v in e.bad { add("enum-\(name)-bad-\(v)", Self.at(e.path, Self.quoted(v))) }
        }
        // Push types with a rule of their own across fields.
        add("enum-apns.push_type-background-with-alert", Self.at(["apns", "push_type"], #""background""#), .crossField)
        add("enum-apns.push_type-mdm-without-data", Self.at(["apns", "push_type"], #""mdm""#), .crossField)
        add("enum-apns.push_type-liveactivity-without-event", Self.at(["apns", "push_type"], #""liveactivity""#), .crossField)
        add("enum-apns.push_type-background-data-only", Self.bare.setting("data", #"{"k":"v"}"#).setting("apns", #"{"push_type":"background"}"#))
        add("enum-platform-windows", Self.full.setting("recipients", #"[{"token":"t","platform":"windows"}]"#))
        add("enum-platform-IOS", Self.full.setting("recipients", #"[{"token":"t","platform":"IOS"}]"#))
    }

    // MARK: wrong types

    mutating func wrongTypes() {
        let top: [(String, [String])] = [
            ("schema_version", ["\"1\"", "[1]"]), ("id", ["5", "{}"]), ("app", ["5", "[\"a\"]"]), ("created_at", ["5", "1795262400"]),
            ("recipients", ["{}", "\"x\"", "[\"tok\"]"]), ("alert", ["\"hi\"", "[]", "true"]), ("badge", ["\"5\"", "{}"]),
            ("sound", ["5", "[]", "true"]), ("category", ["5"]), ("thread_id", ["false"]), ("content_available", ["\"true\"", "1"]),
            ("mutable_content", ["0"]), ("relevance_score", ["\"0.5\""]), ("image_url", ["5"]), ("data", ["[]", "\"x\"", "5"]),
            ("apns", ["[]", "\"x\""]), ("fcm", ["\"x\"", "[]"]), ("priority", ["1", "true"]), ("interruption_level", ["true"]),
            ("collapse_key", ["5"]), ("campaign", ["5", "true", "[\"a\"]", "{}"]), ("ttl_seconds", ["\"60\""]), ("expires_at", ["5"]), ("target_content_id", ["5"]),
        ]
        for (field, raws) in top {
            for (i, raw) in raws.enumerated() { add("type-\(field)-\(i)", Self.full.setting(field, raw)) }
        }
        let nested: [([String], String)] = [
            (["alert", "title"], "5"), (["alert", "body_loc_args"], "\"a\""), (["alert", "title_loc_key"], "5"),
            (["sound", "critical"], "\"yes\""), (["sound", "volume"], "\"1\""), (["sound", "name"], "5"),
            (["apns", "aps"], "[]"), (["apns", "aps"], "\"x\""), (["apns", "headers"], "[]"), (["apns", "headers", "apns-priority"], "10"),
            (["apns", "headers", "apns-expiration"], "0"), (["apns", "topic"], "5"), (["apns", "push_type"], "1"),
            (["fcm", "android"], "[]"), (["fcm", "android", "data", "k"], "1"), (["fcm", "android", "data"], "[]"),
            (["fcm", "android", "notification"], "\"x\""), (["fcm", "android", "notification", "title"], "5"),
            (["fcm", "android", "notification", "sticky"], "\"yes\""), (["fcm", "android", "notification", "title_loc_args"], "[1]"),
            (["fcm", "android", "notification", "body_loc_args"], "\"a\""), (["fcm", "android", "notification", "notification_count"], "\"1\""),
            (["fcm", "android", "direct_boot_ok"], "\"yes\""), (["fcm", "android", "ttl"], "60"), (["fcm", "android", "collapse_key"], "5"),
            (["fcm", "android", "restricted_package_name"], "[]"), (["fcm", "android", "fcm_options"], "\"x\""),
            (["fcm", "webpush", "headers", "TTL"], "60"), (["fcm", "webpush", "notification"], "\"x\""), (["fcm", "webpush", "data", "k"], "1"),
            (["fcm", "webpush", "fcm_options"], "[]"), (["fcm", "apns", "payload"], "[]"), (["fcm", "apns", "headers", "x"], "1"),
            (["fcm", "apns", "fcm_options"], "5"), (["fcm", "fcm_options", "analytics_label"], "5"), (["fcm", "fcm_options"], "\"x\""),
        ]
        for (i, (path, raw)) in nested.enumerated() {
            let base = path.first == "sound" ? Self.full.setting("sound", #"{"name":"a"}"#) : Self.full
            let doc: RawDocument
            if path.first == "sound" {
                doc = path[1] == "name" ? base.setting("sound", #"{"name":\#(raw)}"#) : base.setting("sound", #"{"name":"a","\#(path[1])":\#(raw)}"#)
            } else if path.first == "alert" {
                doc = base.setting("alert", #"{"title":"t","\#(path[1])":\#(raw)}"#)
            } else {
                doc = Self.at(path, raw, base: base)
            }
            add("type-\(path.joined(separator: "."))-\(i)", doc)
        }
        add("type-alert.args-item", Self.full.setting("alert", #"{"title":"t","title_loc_key":"k","title_loc_args":["a",2]}"#))
        add("type-recipients-null-item", Self.full.setting("recipients", "[null]"))
    }

    // MARK: unknown fields

    mutating func unknownFields() {
        add("unknown-top", Self.full.setting("colour", #""red""#))
        add("unknown-top-null", Self.full.setting("colour", "null"))
        add("unknown-alert", Self.full.setting("alert", #"{"title":"t","colour":"red"}"#))
        add("unknown-sound", Self.full.setting("sound", #"{"name":"a","loud":true}"#))
        add("unknown-apns", Self.at(["apns", "extra"], "1"))
        add("unknown-fcm", Self.at(["fcm", "ios"], "{}"))
        add("unknown-recipient", Self.full.setting("recipients", #"[{"token":"t","platform":"ios","x":1}]"#))
        add("unknown-recipient-user-platform", Self.full.setting("recipients", #"[{"user_id":"u","platform":"ios"}]"#))
        for header in ["apns-topic", "apns-push-type", "apns-id", "x-custom", "APNS-PRIORITY", "Apns-Expiration", "apns-collapse-ID"] {
            add("unknown-apns-header-\(header)", Self.at(["apns", "headers", header], #""5""#))
        }
        // Pass-through blocks: FCM's own fields PushFleet does not check.
        for path in [["fcm", "android", "foo"], ["fcm", "android", "notification", "vibrate_timings"], ["fcm", "webpush", "foo"],
                     ["fcm", "apns", "foo"], ["fcm", "fcm_options", "foo"], ["fcm", "android", "fcm_options", "foo"],
                     ["apns", "aps", "anything"], ["fcm", "webpush", "fcm_options", "foo"]] {
            add("passthrough-\(path.joined(separator: "."))", Self.at(path, #"["any",1]"#))
        }
    }

    // MARK: content

    mutating func content() {
        let bare = Self.bare
        add("content-none", bare)
        let cases: [(String, String, String)] = [
            ("alert-empty", "alert", "{}"), ("alert-title-empty", "alert", #"{"title":""}"#), ("alert-all-empty", "alert", #"{"title":"","subtitle":"","body":""}"#),
            ("alert-title", "alert", #"{"title":"x"}"#), ("alert-subtitle", "alert", #"{"subtitle":"x"}"#), ("alert-body", "alert", #"{"body":"x"}"#),
            ("alert-launch-image-only", "alert", #"{"launch_image":"x"}"#), ("alert-title-loc-key", "alert", #"{"title_loc_key":"k"}"#),
            ("alert-subtitle-loc-key", "alert", #"{"subtitle_loc_key":"k"}"#), ("alert-body-loc", "alert", #"{"body_loc_key":"k","body_loc_args":["a"]}"#),
            ("alert-args-only", "alert", #"{"title":"t","title_loc_args":["a"]}"#), ("alert-subtitle-args-only", "alert", #"{"body":"t","subtitle_loc_args":[]}"#),
            ("badge-0", "badge", "0"), ("sound-default", "sound", #""default""#), ("sound-object", "sound", #"{"name":"a"}"#),
            ("data-empty", "data", "{}"), ("data-null-value", "data", #"{"k":null}"#), ("data-one", "data", #"{"k":"v"}"#),
            ("content-available-true", "content_available", "true"), ("content-available-false", "content_available", "false"),
            ("mutable-content-only", "mutable_content", "true"), ("apns-empty", "apns", "{}"), ("apns-aps-empty", "apns", #"{"aps":{}}"#),
            ("apns-aps-one", "apns", #"{"aps":{"x":1}}"#), ("apns-push-alert", "apns", #"{"push_type":"alert"}"#),
            ("apns-push-background", "apns", #"{"push_type":"background"}"#), ("apns-push-voip", "apns", #"{"push_type":"voip"}"#),
            ("apns-push-location", "apns", #"{"push_type":"location"}"#), ("apns-push-widgets", "apns", #"{"push_type":"widgets"}"#),
            ("apns-push-complication", "apns", #"{"push_type":"complication"}"#), ("apns-push-fileprovider", "apns", #"{"push_type":"fileprovider"}"#),
            ("apns-push-pushtotalk", "apns", #"{"push_type":"pushtotalk"}"#), ("apns-headers-only", "apns", #"{"headers":{"apns-priority":"5"}}"#),
            ("fcm-only", "fcm", #"{"android":{"notification":{"title":"t"}}}"#), ("category-only", "category", #""c""#),
        ]
        for (slug, field, raw) in cases { add("content-\(slug)", bare.setting(field, raw)) }
        add("content-apns-push-mdm", bare.setting("apns", #"{"push_type":"mdm"}"#), .crossField)
        add("content-apns-push-mdm-with-magic", bare.setting("apns", #"{"push_type":"mdm"}"#).setting("data", #"{"mdm":"magic"}"#))
        add("content-alert-empty-beside-badge", bare.setting("alert", "{}").setting("badge", "1"))
    }

    // MARK: recipients

    mutating func recipientForms() {
        let forms: [(String, String)] = [
            ("empty", "[]"), ("user", #"[{"user_id":"u"}]"#), ("topic", #"[{"topic":"news"}]"#), ("topic-prefix", #"[{"topic":"/topics/news"}]"#),
            ("topic-newline", #"[{"topic":"news\n"}]"#), ("topic-space", #"[{"topic":"new s"}]"#), ("topic-empty", #"[{"topic":""}]"#),
            ("topic-chars", #"[{"topic":"a-Z_0.9~%"}]"#), ("topic-unicode", #"[{"topic":"néws"}]"#),
            ("condition-1", #"[{"condition":"'a' in topics"}]"#), ("condition-none", #"[{"condition":"a"}]"#),
            ("condition-5", #"[{"condition":"'a' in topics || 'b' in topics || 'c' in topics || 'd' in topics || 'e' in topics"}]"#),
            ("condition-6", #"[{"condition":"'a' in topics || 'b' in topics || 'c' in topics || 'd' in topics || 'e' in topics || 'f' in topics"}]"#),
            ("condition-glued", #"[{"condition":"in topicsin topics"}]"#), ("condition-combining", "[{\"condition\":\"'a' in topics\u{301}\"}]"),
            ("condition-empty", #"[{"condition":""}]"#), ("token-no-platform", #"[{"token":"t"}]"#), ("platform-only", #"[{"platform":"ios"}]"#),
            ("two-forms", #"[{"user_id":"u","topic":"t"}]"#), ("empty-object", "[{}]"), ("duplicates", #"[{"user_id":"u"},{"user_id":"u"}]"#),
            ("token-any-text", #"[{"token":"not hex at all","platform":"ios"}]"#),
        ]
        for (slug, raw) in forms { add("recipients-\(slug)", Self.full.setting("recipients", raw)) }
        let many = { (n: Int) in "[" + (0..<n).map { #"{"user_id":"u\#($0)"}"# }.joined(separator: ",") + "]" }
        add("recipients-1000", Self.full.setting("recipients", many(1000)))
        add("recipients-1001", Self.full.setting("recipients", many(1001)))
    }

    // MARK: patterns

    mutating func patterns() {
        let ids: [String] = [
            "A1A2A3A4-B1B2-4C1C-8D1D-E1E2E3E4E5E8", "a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e", "{a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8}",
            "a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8\n", "urn:uuid:a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8", "g1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8",
            "a1a2a3a4b1b24c1c8d1de1e2e3e4e5e8", "a1a2a3a4-b1b2-4c1c-8d1de1e2e3e4e5e8-", "00000000-0000-0000-0000-000000000000", "",
            "a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e\u{665}",
        ]
        for (i, id) in ids.enumerated() { add("pattern-id-\(i)", Self.full.setting("id", Self.quoted(id))) }
        let ttls = ["0s", "3600s", "3.5s", "2419200s", "2419200.000000000s", "2419200.000000001s", "2419201s", "1.1234567891s",
                    "1.123456789s", ".5s", "1.s", "1e3s", "-1s", "3600", "0002419200s", "99999999999999999999s", "3600s\n", "\u{663}s",
                    "1h", "2419199.999999999s", "s", "", "3600S", "+1s", "1 s"]
        for (i, ttl) in ttls.enumerated() { add("pattern-android-ttl-\(i)", Self.at(["fcm", "android", "ttl"], Self.quoted(ttl))) }
        for (i, color) in ["#a1b2c3", "#A1B2C3", "a1b2c3", "#a1b2c3\n", "#a1b2c", "#a1b2c3d", "#g1b2c3", ""].enumerated() {
            add("pattern-color-\(i)", Self.at(["fcm", "android", "notification", "color"], Self.quoted(color)))
        }
        let labels = ["a", String(repeating: "a", count: 50), String(repeating: "a", count: 51), "has space", "", "a\n", "a-_.~%Z9", "é"]
        for (i, label) in labels.enumerated() {
            add("pattern-label-\(i)", Self.at(["fcm", "fcm_options", "analytics_label"], Self.quoted(label)))
            add("pattern-android-label-\(i)", Self.at(["fcm", "android", "fcm_options", "analytics_label"], Self.quoted(label)))
        }
        for (i, exp) in ["0", "123456789012", "1234567890123", "", "12a", "1\n", "-1", "\u{661}"].enumerated() {
            add("pattern-apns-expiration-\(i)", Self.at(["apns", "headers", "apns-expiration"], Self.quoted(exp)))
        }
        // Text sent as an HTTP/2 header value: no control character (a CR or LF
        // would start a header of the producer's choosing). A tab, DEL and C1
        // controls are in or out exactly as the schema's pattern says.
        let headerTexts = ["a\r\napns-push-type: voip", "a\n", "\na", "a\rb", "a\u{0}b", "a\tb", "a\u{7F}", "a\u{1F}",
                           "a\u{80}b", "a b", "é\u{85}", "\u{2028}"]
        for (i, text) in headerTexts.enumerated() {
            add("pattern-header-collapse_key-\(i)", Self.full.setting("collapse_key", Self.quoted(text)))
            add("pattern-header-apns.topic-\(i)", Self.at(["apns", "topic"], Self.quoted(text)))
            add("pattern-header-apns-collapse-id-\(i)", Self.at(["apns", "headers", "apns-collapse-id"], Self.quoted(text)))
            // A campaign refuses the C1 controls (U+0080-U+009F) too.
            add("pattern-campaign-\(i)", Self.full.setting("campaign", Self.quoted(text)))
        }
    }

    // MARK: reserved data keys

    mutating func reservedKeys() {
        let keys = ["from", "message_type", "collapse_key", "google.x", "google.", "gcm.notification.x", "gcm.x", "aps",
                    "googlex", "fromx", "gcm", "google", "Google.x", "message_typ", "k"]
        for key in keys {
            add("reserved-data-\(key)", Self.full.setting("data", #"{\#(Self.quoted(key)):"v"}"#))
            add("reserved-android-\(key)", Self.at(["fcm", "android", "data", key], #""v""#))
            add("reserved-webpush-\(key)", Self.at(["fcm", "webpush", "data", key], #""v""#))
        }
    }

    // MARK: JSON text

    mutating func textRules() {
        let full = Self.full.text
        add("text-duplicate-top", bytes: Array((String(full.dropLast()) + #","badge":1,"badge":2}"#).utf8), .duplicateKey)
        add("text-duplicate-nested", Self.full.setting("data", #"{"k":1,"k":2}"#), .duplicateKey)
        add("text-duplicate-required", bytes: Array((String(full.dropLast()) + #","app":"other"}"#).utf8), .duplicateKey)
        add("text-bom", bytes: [0xEF, 0xBB, 0xBF] + Array(full.utf8), .byteOrderMark)
        for depth in [62, 63, 70] {
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            add("text-depth-data-\(depth)", Self.full.setting("data", #"{"k":\#(value)}"#), depth > 62 ? .nestingDepth : nil)
        }
        let limit = IntakeLimits.maxMessageBytes
        add("text-size-limit", bytes: Array((full + String(repeating: " ", count: limit - full.utf8.count)).utf8))
        add("text-size-limit+1", bytes: Array((full + String(repeating: " ", count: limit + 1 - full.utf8.count)).utf8), .messageSize)
        let users = { (n: Int, len: Int) in "[" + (0..<n).map { #"{"user_id":"\#(Self.padded($0, 5))\#(String(repeating: "u", count: len - 5))"}"# }.joined(separator: ",") + "]" }
        add("text-size-1000-users", Self.full.setting("recipients", users(1000, 255)), .messageSize)
        add("text-size-900-users", Self.full.setting("recipients", users(900, 255)))
        add("text-nul-escaped", Self.full.setting("alert", #"{"title":"a\u0000b"}"#), .nulCharacter)
        add("text-nul-key", Self.full.setting("data", #"{"k\u0000":"v"}"#), .nulCharacter)
        add("text-lone-surrogate", Self.full.setting("alert", #"{"title":"a\ud800b"}"#), .loneSurrogate)
        add("text-lone-low-surrogate", Self.full.setting("data", #"{"k":"\udc00"}"#), .loneSurrogate)
        add("text-surrogate-pair", Self.full.setting("alert", #"{"title":"\ud83d\ude00"}"#))
        add("text-number-beyond-double", Self.full.setting("data", #"{"k":1e400}"#), .numberBeyondDouble)
        add("text-number-beyond-double-neg", Self.full.setting("data", #"{"k":-1e400}"#), .numberBeyondDouble)
        add("text-big-integer-in-data", Self.full.setting("data", #"{"k":123456789012345678901234567890}"#))
        add("text-nan", Self.full.setting("data", #"{"k":NaN}"#))
        add("text-infinity", Self.full.setting("data", #"{"k":Infinity}"#))
        add("text-trailing-comma", bytes: Array((String(full.dropLast()) + ",}").utf8))
        add("text-raw-tab", Self.full.setting("alert", "{\"title\":\"a\tb\"}"))
        add("text-raw-del", Self.full.setting("alert", "{\"title\":\"a\u{7F}b\"}"))
        add("text-invalid-utf8", bytes: Array(#"{"schema_version":1,"id":"a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8","app":""#.utf8) + [0xC3, 0x28]
            + Array(#"","created_at":"2026-11-21T12:00:00Z","recipients":[{"user_id":"u"}],"badge":1}"#.utf8))
        add("text-overlong-utf8", bytes: Array(#"{"schema_version":1,"id":"a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e8","app":""#.utf8) + [0xC0, 0xAF]
            + Array(#"","created_at":"2026-11-21T12:00:00Z","recipients":[{"user_id":"u"}],"badge":1}"#.utf8))
        add("text-array", bytes: Array("[\(full)]".utf8))
        add("text-null", bytes: Array("null".utf8))
        add("text-empty", bytes: [])
        add("text-trailing-garbage", bytes: Array((full + "x").utf8))
        add("text-two-documents", bytes: Array((full + full).utf8))
        add("text-leading-whitespace", bytes: Array(("\n\t " + full + "\n").utf8))
        add("text-escaped-key", bytes: Array(full.replacingOccurrences(of: #""app""#, with: #""\u0061pp""#).utf8))
        add("text-escaped-slash-url", Self.full.setting("image_url", #""https:\/\/a\/b""#))
    }

    // MARK: web subscriptions and Huawei tokens

    /// A real P-256 point and auth secret: the simulator's keys for the
    /// subscription id `example-chrome-7f3a` (`SimulatorWebPushSubscriptions`).
    static let p256dh = "BHs4-4Fsn8ddh2d0UKUr5mRye3b_C01_XFFHs5iWnpWPLnSdE91tcZt4aD-frWbHm9_iQg4cv4D7T50aXxD3qF4"
    static let auth = "60eDa6i6clPr6AyFvl75NA"
    static let endpoint = "https://push.example.net/wp/example-chrome-7f3a"
    static let huaweiToken = "IQAAAACy0wNXbGyWYAI4j6SvpDWnS3DvaDvUl73Wc1ORDfHoPv8pcIRs2DboW1tcUylVXCVfJMtBVv8rHV9aA4RiJDCzlgleKpIKo6K44CTMeYQK10AczmZ"

    /// `{"platform":"web","subscription":{"endpoint","keys":{"p256dh","auth"}}}`
    /// with raw JSON for each part; nil leaves a member out, `sub`/`keys`/`item`
    /// add raw members (",\"x\":1") to the subscription, its keys or the recipient.
    static func web(platform: String? = #""web""#, endpoint: String? = SchemaCorpus.quoted(SchemaCorpus.endpoint),
                    p256dh: String? = SchemaCorpus.quoted(SchemaCorpus.p256dh), auth: String? = SchemaCorpus.quoted(SchemaCorpus.auth),
                    keys: String = "", sub: String = "", item: String = "") -> String {
        var keyMembers: [String] = []
        if let p256dh { keyMembers.append(#""p256dh":\#(p256dh)"#) }
        if let auth { keyMembers.append(#""auth":\#(auth)"#) }
        var subMembers: [String] = []
        if let endpoint { subMembers.append(#""endpoint":\#(endpoint)"#) }
        subMembers.append(#""keys":{\#(keyMembers.joined(separator: ","))\#(keys)}"#)
        let subscription = "{" + subMembers.joined(separator: ",") + sub + "}"
        var members: [String] = []
        if let platform { members.append(#""platform":\#(platform)"#) }
        members.append(#""subscription":\#(subscription)"#)
        return "{" + members.joined(separator: ",") + item + "}"
    }

    mutating func webAndHuawei() {
        let ios = #"{"token":"\#(Self.iosToken)","platform":"ios"}"#
        let android = #"{"token":"\#(Self.androidToken)","platform":"android"}"#
        let huawei = #"{"token":"\#(Self.huaweiToken)","platform":"huawei"}"#
        let web = Self.web()
        func to(_ items: String...) -> RawDocument { Self.full.setting("recipients", "[" + items.joined(separator: ",") + "]") }

        // Whole recipients.
        add("web-valid", to(web))
        add("web-and-huawei-beside-ios-android", to(ios, android, web, huawei))
        add("web-duplicate", to(web, web))
        add("web-same-endpoint-other-keys", to(web, Self.web(p256dh: Self.quoted("BA" + String(repeating: "A", count: 85)))))
        add("web-token-platform-web", to(#"{"token":"\#(Self.endpoint)","platform":"web"}"#))
        add("web-token-platform-web-and-subscription", to(Self.web(item: #","token":"t""#)))
        add("web-token-null-beside-subscription", to(Self.web(item: #","token":null"#)))
        add("web-user-id-beside-subscription", to(Self.web(item: #","user_id":"u""#)))
        add("web-unknown-recipient-member", to(Self.web(item: #","x":1"#)))
        add("web-platform-only", to(#"{"platform":"web"}"#))
        add("web-subscription-without-platform", to(Self.web(platform: nil)))
        for (slug, raw) in [("null", "null"), ("ios", #""ios""#), ("android", #""android""#), ("huawei", #""huawei""#),
                            ("WEB", #""WEB""#), ("webpush", #""webpush""#), ("number", "5"), ("array", #"["web"]"#)] {
            add("web-subscription-platform-\(slug)", to(Self.web(platform: raw)))
        }
        for (slug, raw) in [("null", "null"), ("string", #""https://push.example.net/wp/x""#), ("array", "[]"), ("empty", "{}"),
                            ("number", "1")] {
            add("web-subscription-\(slug)", to(#"{"platform":"web","subscription":\#(raw)}"#))
        }

        // Members of the subscription and its keys.
        add("web-unknown-subscription-member", to(Self.web(sub: #","foo":1"#)))
        add("web-unknown-subscription-member-null", to(Self.web(sub: #","foo":null"#)))
        add("web-unknown-subscription-member-options", to(Self.web(sub: #","options":{"userVisibleOnly":true}"#)))
        add("web-unknown-keys-member", to(Self.web(keys: #","x":"y""#)))
        add("web-keys-missing", to(#"{"platform":"web","subscription":{"endpoint":\#(Self.quoted(Self.endpoint))}}"#))
        for (slug, raw) in [("null", "null"), ("empty", "{}"), ("array", "[]"), ("string", #""k""#)] {
            add("web-keys-\(slug)", to(#"{"platform":"web","subscription":{"endpoint":\#(Self.quoted(Self.endpoint)),"keys":\#(raw)}}"#))
        }
        add("web-p256dh-missing", to(Self.web(p256dh: nil)))
        add("web-auth-missing", to(Self.web(auth: nil)))
        add("web-p256dh-null", to(Self.web(p256dh: "null")))
        add("web-auth-null", to(Self.web(auth: "null")))
        add("web-p256dh-number", to(Self.web(p256dh: "4")))
        add("web-auth-array", to(Self.web(auth: #"["a"]"#)))
        add("web-endpoint-missing", to(Self.web(endpoint: nil)))
        add("web-endpoint-null", to(Self.web(endpoint: "null")))
        add("web-endpoint-number", to(Self.web(endpoint: "443")))

        // expirationTime: a number or null, nothing else.
        let expirations: [(String, String, WorkerOnlyRule?)] = [
            ("null", "null", nil), ("ms", "1795262400000", nil), ("zero", "0", nil), ("negative", "-1", nil), ("fraction", "1795262400000.5", nil),
            ("exponent", "1.7952624e12", nil), ("1e20", "1e20", nil), ("big-integer", "123456789012345678901234567890", nil),
            ("1e400", "1e400", .numberBeyondDouble), ("string", #""1795262400000""#, nil), ("empty-string", #""""#, nil),
            ("true", "true", nil), ("object", "{}", nil), ("array", "[0]", nil),
        ]
        for (slug, raw, rule) in expirations {
            add("web-expirationTime-\(slug)", to(Self.web(sub: #","expirationTime":\#(raw)"#)), rule)
        }

        // endpoint: the url pattern, https only, at most 2048 bytes.
        let endpoints = [
            "https://a", "HTTPS://PUSH.EXAMPLE.NET/wp/x", "hTtPs://a/b", "http://push.example.net/wp/x", "HTTP://a", "https://", "https:///wp/x",
            "https://?x", "https://#x", "https:a", "https:/a", "//a", "push.example.net/wp/x", "httpss://a", "ftp://a", "wss://a",
            "https://a b/wp", "https://a/w p", "https://a/\n", "https://a\n", "https://a\t", " https://a", "https://a/ ", "https://a/\u{7F}",
            "https://a/\u{1F}", "https://é.example/wp/ü", "https://a\u{A0}b/wp", "https://a/\u{2028}", "https://a/\u{85}",
            "https://user:pw@a/wp/x", "https://a/wp/x#frag", "https://a:99999/wp/x", "https://[::1]:8443/wp/x",
            // What sealing refuses, the schema and intake refuse too: userinfo, a fragment, a port out of range, whitespace.
            "https://user@push.example.net/wp/x", "https://a@/wp/x", "https://push.example.net/wp/x#", "https://a:0/wp", "https://a:65535/wp",
            "https://a:65536/wp", "https://a:0443/wp", "https://a:/wp", "https://a:44x/wp", "https://a/wp\u{3000}x", "https://a/wp\u{FEFF}x",
            "https://a/wp/%41%7e", "https://a/wp/%4", "https://a/wp/%zz", "https://a/w[p]", "https://[fe80::1%25eth0]/wp", "https://[]/wp",
            "https://[::1/wp", "https://[::1]x/wp", "https://a/wp?x=1&y=2;z=(3)*+,$!'~", "https://a/wp/\"x", "https://a/wp/<x>",
            "https://a/wp/x|y", "https://a/wp/x\\y", "https://a/wp/`x`", "https://a/wp/{x}", "https://a/wp/^", "https://a?x", "https://a@b",
            "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH", "https://updates.push.services.mozilla.com/wpush/v2/gAAAAA",
            "https://web.push.apple.com/QGk9Xk", "",
        ]
        for (i, url) in endpoints.enumerated() { add("web-endpoint-\(i)", to(Self.web(endpoint: Self.quoted(url)))) }
        let prefix = "https://push.example.net/wp/"
        func endpoint(_ unit: String, chars: Int) -> String { prefix + String(repeating: unit, count: chars - prefix.count) }
        func endpoint(_ unit: String, bytes: Int) -> String {
            let n = (bytes - prefix.utf8.count) / unit.utf8.count
            return prefix + String(repeating: unit, count: n) + String(repeating: "a", count: bytes - prefix.utf8.count - n * unit.utf8.count)
        }
        add("web-endpoint-ascii-2048", to(Self.web(endpoint: Self.quoted(endpoint("a", chars: 2048)))))
        add("web-endpoint-ascii-2049", to(Self.web(endpoint: Self.quoted(endpoint("a", chars: 2049)))))
        // An endpoint is ASCII (a browser %-encodes a path and punycodes a host), so its 2048 is exact; anything else is refused by both.
        for unit in ["é", "€", "😀"] {
            add("web-endpoint-\(unit.utf8.count)byte-bytes-2048", to(Self.web(endpoint: Self.quoted(endpoint(unit, bytes: 2048)))))
            add("web-endpoint-\(unit.utf8.count)byte-chars-2048", to(Self.web(endpoint: Self.quoted(endpoint(unit, chars: 2048)))))
        }
        let encoded = prefix + String(repeating: "%C3%A9", count: (2048 - prefix.utf8.count) / 6)
        add("web-endpoint-percent-encoded-2048", to(Self.web(endpoint: Self.quoted(encoded + String(repeating: "a", count: 2048 - encoded.utf8.count)))))

        // p256dh: base64url of 65 bytes, 0x04 first: ^B[A-P][A-Za-z0-9_-]{85}=?$
        let p = Self.p256dh
        let p256dhs: [(String, String)] = [
            ("valid", p), ("pad-1", p + "="), ("pad-2", p + "=="), ("pad-3", p + "==="), ("86-chars", String(p.dropLast())),
            ("88-chars", p + "A"), ("86-chars-pad-2", String(p.dropLast()) + "=="), ("88-chars-pad", p + "A="),
            ("first-A", "A" + p.dropFirst()), ("first-C", "C" + p.dropFirst()), ("first-b", "b" + p.dropFirst()),
            ("second-P", "BP" + p.dropFirst(2)), ("second-Q", "BQ" + p.dropFirst(2)), ("second-A", "BA" + p.dropFirst(2)),
            ("second-a", "Ba" + p.dropFirst(2)), ("not-on-curve", "BA" + String(repeating: "A", count: 85)),
            ("all-underscore", "BP" + String(repeating: "_", count: 85)), ("noncanonical-tail", String(p.dropLast()) + "7"),
            ("standard-plus", p.replacingOccurrences(of: "-", with: "+")), ("standard-slash", p.replacingOccurrences(of: "_", with: "/")),
            ("space", String(p.prefix(40)) + " " + String(p.dropFirst(41))), ("newline-end", p + "\n"), ("pad-then-newline", p + "=\n"),
            ("pad-middle", String(p.prefix(40)) + "=" + String(p.dropFirst(41))), ("pad-first", "=" + p.dropFirst()),
            ("compressed-33-bytes", "Ans4-4Fsn8ddh2d0UKUr5mRye3b_C01_XFFHs5iWnpWP"), ("empty", ""),
            ("e-acute", String(p.prefix(40)) + "é" + String(p.dropFirst(41))), ("arabic-digit", String(p.prefix(40)) + "\u{661}" + String(p.dropFirst(41))),
            ("hex-130", "04" + String(repeating: "ab", count: 64)),
        ]
        for (slug, key) in p256dhs { add("web-p256dh-\(slug)", to(Self.web(p256dh: Self.quoted(key)))) }

        // auth: base64url of 16 bytes: ^[A-Za-z0-9_-]{22}(==)?$
        let a = Self.auth
        let auths: [(String, String)] = [
            ("valid", a), ("pad-2", a + "=="), ("pad-1", a + "="), ("pad-3", a + "==="), ("21-chars", String(a.dropLast())),
            ("23-chars", a + "A"), ("24-chars", a + "AA"), ("21-chars-pad-1", String(a.dropLast()) + "="),
            ("20-chars-pad-2", String(a.dropLast(2)) + "=="), ("noncanonical-tail", String(a.dropLast()) + "B"),
            ("dash-underscore", "-_-_-_-_-_-_-_-_-_-_-A"), ("standard-plus", "+" + a.dropFirst()), ("standard-slash", "/" + a.dropFirst()),
            ("space", " " + a.dropFirst()), ("newline-end", a + "\n"), ("pad-newline-end", a + "==\n"), ("empty", ""),
            ("hex-32", "0123456789abcdef0123456789abcdef"), ("e-acute", "é" + a.dropFirst()),
        ]
        for (slug, key) in auths { add("web-auth-\(slug)", to(Self.web(auth: Self.quoted(key)))) }

        // Huawei tokens: 1-512 characters of printable ASCII without spaces (HMSTranslator.isWellFormedToken).
        add("huawei-token", to(huawei))
        for (slug, token) in [("spaces", "not a push kit token"), ("e-acute", "IQAAAé"), ("tab", "IQ\\tA"), ("del", "IQ\\u007fA"),
                              ("nbsp", "IQ\\u00a0A"), ("printable-punctuation", "!\\\"#$%&'()*+,-./:;<=>?@[\\\\]^_`{|}~"),
                              ("512", String(repeating: "T", count: 512)), ("513", String(repeating: "T", count: 513)),
                              ("2048", String(repeating: "T", count: 2048))] {
            add("huawei-token-\(slug)", to(#"{"token":"\#(token)","platform":"huawei"}"#))
        }
        add("huawei-token-empty", to(#"{"token":"","platform":"huawei"}"#))
        add("huawei-token-null", to(#"{"token":null,"platform":"huawei"}"#))
        add("huawei-token-number", to(#"{"token":5,"platform":"huawei"}"#))
        add("huawei-no-platform", to(#"{"token":"\#(Self.huaweiToken)"}"#))
        for platform in ["HUAWEI", "hms", "harmony", "Huawei"] {
            add("huawei-platform-\(platform)", to(#"{"token":"\#(Self.huaweiToken)","platform":"\#(platform)"}"#))
        }
        add("huawei-unknown-member", to(#"{"token":"\#(Self.huaweiToken)","platform":"huawei","app_id":"1"}"#))
        add("huawei-with-subscription", to(#"{"token":"\#(Self.huaweiToken)","platform":"huawei","subscription":{}}"#))
        for key in ["-1", "100", "101", "promo"] {
            add("huawei-collapse-key-\(key)", to(huawei).setting("collapse_key", Self.quoted(key)))
        }

        // Provider payload limits after translation: Web Push 3993 bytes of
        // plaintext (one 4096-byte record), Push Kit 4096 bytes without the token.
        add("web-payload-fits", to(web).setting("alert", #"{"title":"t","body":"\#(String(repeating: "x", count: 3000))"}"#))
        add("web-payload-too-large", to(web).setting("alert", #"{"title":"t","body":"\#(String(repeating: "x", count: 4000))"}"#), .payloadSize)
        add("web-data-too-large", to(web).setting("data", #"{"k":"\#(String(repeating: "x", count: 4000))"}"#), .payloadSize)
        add("huawei-payload-fits", to(huawei).setting("alert", #"{"title":"t","body":"\#(String(repeating: "x", count: 3000))"}"#))
        add("huawei-payload-too-large", to(huawei).setting("alert", #"{"title":"t","body":"\#(String(repeating: "x", count: 4200))"}"#), .payloadSize)
        add("huawei-data-too-large", to(huawei).setting("data", #"{"k":"\#(String(repeating: "x", count: 4200))"}"#), .payloadSize)
        add("web-only-data", to(web).setting("alert", nil).setting("data", #"{"k":"v"}"#))
    }

    // MARK: across fields

    mutating func crossField() {
        add("cross-ttl-and-expires", Self.full.setting("ttl_seconds", "60").setting("expires_at", #""2026-11-22T12:00:00Z""#), .crossField)
        add("cross-background-priority-10", Self.bare.setting("content_available", "true").setting("apns", #"{"headers":{"apns-priority":"10"}}"#), .crossField)
        add("cross-background-badge", Self.bare.setting("badge", "1").setting("apns", #"{"push_type":"background"}"#), .crossField)
        add("cross-liveactivity-ok", Self.bare.setting("apns", #"{"push_type":"liveactivity","aps":{"event":"end","timestamp":1795262400}}"#))
        add("cross-liveactivity-bad-event", Self.bare.setting("apns", #"{"push_type":"liveactivity","aps":{"event":"stop","timestamp":1}}"#), .crossField)
        add("cross-payload-too-large-ios", Self.full.setting("alert", #"{"body":"\#(String(repeating: "x", count: 5000))"}"#), .payloadSize)
        add("cross-payload-too-large-topic", Self.full.setting("recipients", #"[{"topic":"news"}]"#)
            .setting("data", #"{"k":"\#(String(repeating: "x", count: 2100))"}"#), .payloadSize)
    }
}
