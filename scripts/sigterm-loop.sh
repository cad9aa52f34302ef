#!/usr/bin/env bash
# Usage: scripts/sigterm-loop.sh [N]    (default N=50)
#
# Proves that a worker exits 0 on SIGTERM, also before it got its first
# partition assignment (librdkafka 2.0.2's cooperative-sticky assignor can
# abort such a close: "rd_kafka_sticky_assignor_state_destroy: Assertion
# 'assignor_state' failed", exit 134, so the worker's close path avoids it).
#
# Starts `pushfleet mock-kafka` and one resident worker (so the group, and the
# receipts group, have a member and go through rebalance rounds while the
# others join and leave), then N times: starts a worker, sends it SIGTERM
# after a delay between 0.1 and 2 s (varied), and records its exit code.
# (A signal in the first ~50 ms after exec, before main() runs, kills any
# process with 143: no handler can be installed earlier. The worker installs
# its handlers on the first line of `worker`.)
# Fails if any exit code is not 0. Both consumers of a worker (notifications
# group and `<group>.receipts`) go through this.
#
# Environment:
#   PUSHFLEET_BIN        the pushfleet binary (default .build/debug/pushfleet)
#   KAFKA_PROPERTIES     extra librdkafka properties as JSON members, e.g.
#                        '"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"'
#   SIGTERM_LOOP_LOGS    keep every worker's log in this directory
# Runs under scripts/with-postgres.sh unless PUSHFLEET_DATABASE_URL is set.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
if [[ -z "${PUSHFLEET_DATABASE_URL:-}" ]]; then
    exec bash "$here/with-postgres.sh" bash "$0" "$@"
fi
runs="${1:-50}"
bin="${PUSHFLEET_BIN:-$here/../.build/debug/pushfleet}"
[[ -x "$bin" ]] || { echo "sigterm-loop: no pushfleet binary at $bin (swift build, or set PUSHFLEET_BIN)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/sigterm-loop.XXXXXX")"
kafka_pid=""
resident_pid=""
cleanup() {
    [[ -n "$resident_pid" ]] && kill -TERM "$resident_pid" 2>/dev/null && wait "$resident_pid" 2>/dev/null || true
    [[ -n "$kafka_pid" ]] && kill -TERM "$kafka_pid" 2>/dev/null && wait "$kafka_pid" 2>/dev/null || true
    if [[ -n "${SIGTERM_LOOP_LOGS:-}" ]]; then mkdir -p "$SIGTERM_LOOP_LOGS" && cp "$work"/*.log "$SIGTERM_LOOP_LOGS"/ 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin" mock-kafka --bootstrap-file "$work/bootstrap" --log-level warning >"$work/mock-kafka.log" 2>&1 &
kafka_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/bootstrap" ]] && break; sleep 0.1; done
[[ -s "$work/bootstrap" ]] || { echo "sigterm-loop: mock-kafka did not start" >&2; cat "$work/mock-kafka.log" >&2; exit 1; }
bootstrap="$(cat "$work/bootstrap")"

openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/AuthKey.p8"
cat >"$work/worker.json" <<JSON
{"kafka": {"bootstrap_servers": "$bootstrap", "group_id": "sigterm-loop", "properties": {${KAFKA_PROPERTIES:-}}},
 "database": {"url": "$PUSHFLEET_DATABASE_URL", "pool_size": 1},
 "observability": {"listen": "127.0.0.1:0"},
 "apps": {"com.example.sigterm": {"apns": {"topic": "com.example.sigterm", "team_id": "TEAM000001",
          "key_id": "KEY0000001", "key_path": "$work/AuthKey.p8", "base_url": "https://127.0.0.1:9"}}}}
JSON
start_worker() {  # $1: log file
    PUSHFLEET_EXIT_WITH_PARENT=1 PUSHFLEET_LOG_LEVEL=info "$bin" worker --config "$work/worker.json" >"$1" 2>&1 &
}

start_worker "$work/resident.log"
resident_pid=$!
sleep 1

declare -A codes=()
failed=0
never_assigned=0
started_at=$(date +%s)
for i in $(seq 1 "$runs"); do
    delay_ms=$(( 100 + (i * 373) % 1901 ))
    log="$work/run-$i.log"
    start_worker "$log"
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -TERM "$pid" 2>/dev/null || true
    # Wait up to 60 s for the exit.
    rc=""
    for _ in $(seq 1 600); do
        if ! kill -0 "$pid" 2>/dev/null; then break; fi
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        rc="hung"
    else
        set +e; wait "$pid"; rc=$?; set -e
    fi
    grep -q '"partitions assigned"\|partitions assigned' "$log" || never_assigned=$((never_assigned + 1))
    codes[$rc]=$(( ${codes[$rc]:-0} + 1 ))
    if [[ "$rc" != "0" ]]; then
        failed=$((failed + 1))
        echo "run $i: SIGTERM after ${delay_ms} ms -> exit $rc" >&2
        grep -h "Assertion\|abort" "$log" | head -3 >&2 || true
        cp "$log" "${TMPDIR:-/tmp}/sigterm-loop-failed-run-$i.log"
    fi
done
summary=""
for code in "${!codes[@]}"; do summary="$summary exit $code: ${codes[$code]};"; done
echo "sigterm-loop: $runs runs in $(( $(date +%s) - started_at )) s;$summary never assigned before SIGTERM: $never_assigned"
if [[ "$failed" -gt 0 ]]; then
    echo "sigterm-loop: FAILED ($failed of $runs runs did not exit 0; logs in ${TMPDIR:-/tmp}/sigterm-loop-failed-run-*.log)" >&2
    exit 1
fi
echo "sigterm-loop: OK"
