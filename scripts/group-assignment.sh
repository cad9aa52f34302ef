#!/usr/bin/env bash
# Usage: scripts/group-assignment.sh [ROUNDS]    (default 3)
#
# Measures how fast worker processes get partitions from the consumer group
# on the local stack (`pushfleet mock-kafka`, default topics: 6 notification
# partitions, 3 per retry tier, 3 device partitions).
#
# Each round, on a fresh mock cluster: worker 1 starts; worker 2 starts 4 s
# later (a join into a settled group, the case most likely to stall); once both
# own partitions, worker 3 starts. Reported per round, from the worker logs:
#   w1, w2, w3       seconds from a worker's start to its first partitions
#   both             seconds from worker 2's start until workers 1 and 2 both own partitions
#   unowned          longest time a partition revoked at the scale-up had no owner
#                    (revoked by worker 1 or 2 until assigned to any worker)
#   commit_failures  "Group rebalance in progress"/commit warnings in the logs
# A worker that gets nothing within 120 s is reported as "none".
#
# Environment: PUSHFLEET_BIN (default .build/debug/pushfleet); KAFKA_PROPERTIES
# (extra librdkafka properties as JSON members, e.g.
# '"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"').
# Runs under scripts/with-postgres.sh unless PUSHFLEET_DATABASE_URL is set.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
if [[ -z "${PUSHFLEET_DATABASE_URL:-}" ]]; then
    exec bash "$here/with-postgres.sh" bash "$0" "$@"
fi
rounds="${1:-3}"
bin="${PUSHFLEET_BIN:-$here/../.build/debug/pushfleet}"
[[ -x "$bin" ]] || { echo "group-assignment: no pushfleet binary at $bin" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/group-assignment.XXXXXX")"
pids=()
stop_all() {
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/AuthKey.p8"

now_ms() { date +%s%3N; }
has_partitions() { grep -q '"message":"partitions assigned"' "$1" 2>/dev/null; }

for round in $(seq 1 "$rounds"); do
    dir="$work/round-$round"
    mkdir -p "$dir"
    "$bin" mock-kafka --bootstrap-file "$dir/bootstrap" --log-level warning >"$dir/mock-kafka.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do [[ -s "$dir/bootstrap" ]] && break; sleep 0.1; done
    cat >"$dir/worker.json" <<JSON
{"kafka": {"bootstrap_servers": "$(cat "$dir/bootstrap")", "group_id": "assignment", "properties": {${KAFKA_PROPERTIES:-}}},
 "database": {"url": "$PUSHFLEET_DATABASE_URL", "pool_size": 1},
 "observability": {"listen": "127.0.0.1:0"},
 "apps": {"com.example.assign": {"apns": {"topic": "com.example.assign", "team_id": "TEAM000001",
          "key_id": "KEY0000001", "key_path": "$work/AuthKey.p8", "base_url": "https://127.0.0.1:9"}}}}
JSON
    start() {  # $1: worker number
        now_ms >"$dir/w$1.start"
        PUSHFLEET_EXIT_WITH_PARENT=1 PUSHFLEET_LOG_LEVEL=info "$bin" worker --config "$dir/worker.json" >"$dir/w$1.log" 2>&1 &
        pids+=($!)
    }
    start 1
    sleep 4
    start 2
    deadline=$(( $(now_ms) + 120000 ))
    until { has_partitions "$dir/w1.log" && has_partitions "$dir/w2.log"; } || (( $(now_ms) > deadline )); do sleep 0.2; done
    sleep 2
    start 3
    deadline=$(( $(now_ms) + 120000 ))
    until has_partitions "$dir/w3.log" || (( $(now_ms) > deadline )); do sleep 0.2; done
    sleep 3
    now_ms >"$dir/stop"
    stop_all
    python3 - "$dir" "$round" <<'PY'
import json, sys, datetime, re
d, rnd = sys.argv[1], sys.argv[2]
def ms(ts): return int(datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
events, start, commit_failures = [], {}, 0
for w in (1, 2, 3):
    start[w] = int(open(f"{d}/w{w}.start").read())
stop = int(open(f"{d}/stop").read())
for w in (1, 2, 3):
    for line in open(f"{d}/w{w}.log", errors="replace"):
        if "rebalance in progress" in line.lower() or "commit failed" in line.lower(): commit_failures += 1
        try: e = json.loads(line)
        except ValueError: continue
        m = e.get("message")
        if m in ("partitions assigned", "partitions revoked", "partitions lost"):
            parts = re.findall(r"[\w.\-]+\[\d+\]", e.get("metadata", {}).get("kafka.partitions", ""))
            events.append((ms(e["timestamp"]), w, m.split()[1], parts))
events.sort()
first = {w: next((t for t, ww, k, p in events if ww == w and k == "assigned" and p), None) for w in (1, 2, 3)}
fmt = lambda v: "none" if v is None else f"{v / 1000:.1f}"
rel = {w: (first[w] - start[w]) if first[w] else None for w in (1, 2, 3)}
both = (max(first[1], first[2]) - start[2]) if first[1] and first[2] else None
# Scale-up: partitions revoked from workers 1/2 after worker 3 started, until anyone gets them again.
unowned = 0
for t, w, k, parts in events:
    if w in (1, 2) and k in ("revoked", "lost") and start[3] <= t < stop:
        for p in parts:
            back = next((t2 for t2, w2, k2, p2 in events if t2 >= t and k2 == "assigned" and p in p2), None)
            unowned = max(unowned, (back - t) if back else 10**9)
print(f"round {rnd}: w1 {fmt(rel[1])} s, w2 {fmt(rel[2])} s, both {fmt(both)} s, w3 {fmt(rel[3])} s, "
      f"unowned at scale-up {'never re-assigned' if unowned >= 10**9 else f'{unowned / 1000:.1f} s'}, "
      f"commit failures {commit_failures}")
PY
done
