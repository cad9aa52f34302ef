#!/usr/bin/env bash
# Instruction counts of PushCore's per-message work, under callgrind:
# intake decode alone, and decode + APNs translation, of the message the
# pipeline bench publishes (BenchPublisher.message: one iOS token, alert,
# badge, one data key, ~410 bytes); then the same two for the same message
# to one Android token (163 characters, the shape FCM issues) instead.
#
# valgrind 3.19 cannot run the `pushfleet` binary itself (it crashes while
# loading it), so this links PushCore's release objects into a tiny driver.
#
#   scripts/callgrind-core.sh [scratch-path] [messages]
# Prints instructions per message for each phase; the callgrind files stay
# in $OUT (default /tmp/pushfleet-callgrind) for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=${1:-.build}
COUNT=${2:-2000}
OUT=${OUT:-/tmp/pushfleet-callgrind}
mkdir -p "$OUT"
swift build -c release --target PushCore --scratch-path "$SCRATCH" >/dev/null
cat >"$OUT/main.swift" <<'SWIFT'
import Foundation
import PushCore

let count = Int(CommandLine.arguments[1]) ?? 2000
let phase = CommandLine.arguments[2]
let createdAt = Date()
let app = "com.pushfleet.bench"
let android = phase.hasSuffix("-fcm")  // decode-fcm, translate-fcm: the Android-token variant
let messages: [[UInt8]] = (0..<1024).map { i in
    var state = UInt64(i) &* 0x9E37_79B9 &+ 17
    func next() -> UInt64 {  // splitmix64, as BenchPublisher's tokens
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    let token = (0..<4).map { _ in String(format: "%016llx", next()) }.joined()
    // FCM's shape: an instance id, ":APA91b", then base64url-ish characters.
    let fcmToken = String(token.prefix(22)) + ":APA91b" + token + String(token.suffix(70)).uppercased()
    let n = PushNotification(
        id: UUID(), app: app, createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(3600),
        recipients: [android ? Recipient(token: fcmToken, platform: .android) : Recipient(token: token, platform: .ios)],
        alert: PushNotification.Alert(title: "Your order shipped", body: "Order #\(i) is on its way."),
        badge: 1, data: [("order_id", .string(String(i)))])
    return n.intakeJSON().encoded()
}
let context = TranslationContext(apnsTopic: app, fcmProjectID: "pushfleet-bench")

@inline(never) func decodeOnly(_ count: Int) -> Int {
    var recipients = 0
    for i in 0..<count {
        if case .success(let n) = PushNotification.decode(messages[i % messages.count]) { recipients &+= n.recipients.count }
    }
    return recipients
}

@inline(never) func decodeAndTranslate(_ count: Int) -> Int {
    var bytes = 0
    for i in 0..<count {
        guard case .success(let n) = PushNotification.decode(messages[i % messages.count]) else { continue }
        for r in n.recipients {
            if case .success(let request) = n.request(for: r, context: context) { bytes &+= request.body.count }
        }
    }
    return bytes
}

@inline(never) func warmUp() -> Int {  // statics, caches; not counted (another symbol)
    var bytes = 0
    for message in messages.prefix(100) {
        guard case .success(let n) = PushNotification.decode(message) else { continue }
        for r in n.recipients {
            if case .success(let request) = n.request(for: r, context: context) { bytes &+= request.body.count }
        }
    }
    return bytes
}

precondition(warmUp() > 0, "the warm-up translated nothing")
let result = phase.hasPrefix("decode") ? decodeOnly(count) : decodeAndTranslate(count)
precondition(result > 0, "nothing decoded")
SWIFT
REL="$SCRATCH/release"
swiftc -O -I "$REL/Modules" "$OUT/main.swift" -module-name CoreDriver -o "$OUT/core-driver" "$REL"/PushCore.build/*.o
for phase in decode translate decode-fcm translate-fcm; do
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$phase.out" \
        --toggle-collect='*CoreDriver10decodeOnly*' --toggle-collect='*CoreDriver18decodeAndTranslate*' \
        "$OUT/core-driver" "$COUNT" "$phase" 2>"$OUT/$phase.log"
    total=$(grep -E '^(summary|totals):' "$OUT/$phase.out" | head -1 | awk '{print $2}')
    echo "$phase: $((total / COUNT)) instructions per message ($total over $COUNT)"
done
echo "(decode + translate minus decode = translation per request; the same for the -fcm pair)"
