#!/usr/bin/env bash
# `make bench`: builds pushfleet in release mode and runs the three benchmark modes.
#
#   bench send      N notifications through the APNs client at the simulator's
#                   fast sink, alternating with the libcurl floor (a minimal C
#                   loop over libcurl, same sink and shape) for BENCH_ROUNDS
#                   rounds, then h2load against the same sink (same -c/-m/body)
#   bench core      PushCore alone: intake decode and APNs translation per
#                   message, on one thread, no servers
#   bench pipeline  N notifications enqueued into the mock Kafka cluster first,
#                   then W worker processes, until every one is final in a
#                   throwaway PostgreSQL and the offsets are committed; then
#                   again paced at half the rate it sustained (p99 latency),
#                   and again with time-ordered ids (PostgreSQL's cost)
#
# Environment: BENCH_NOTIFICATIONS (100000), BENCH_CONNECTIONS (2),
# BENCH_CONCURRENCY (100), BENCH_WORKERS (1), BENCH_ROUNDS (3), BENCH_OUT (.build/bench: JSON files),
# SWIFT_BUILD_FLAGS (extra flags for swift build, e.g. --scratch-path).
set -euo pipefail
cd "$(dirname "$0")/.."

n="${BENCH_NOTIFICATIONS:-100000}"
out="${BENCH_OUT:-.build/bench}"
mkdir -p "$out"
# shellcheck disable=SC2086
swift build -c release --product pushfleet ${SWIFT_BUILD_FLAGS:-}
# shellcheck disable=SC2086
bin="$(swift build -c release --show-bin-path ${SWIFT_BUILD_FLAGS:-})/pushfleet"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"

"$bin" bench send --notifications "$n" \
    --connections "${BENCH_CONNECTIONS:-2}" --concurrency "${BENCH_CONCURRENCY:-100}" \
    --floor --rounds "${BENCH_ROUNDS:-3}" --compare-h2load --json "$out/send-$stamp.json"
echo
# PushCore alone (intake decode, APNs translation), no servers.
"$bin" bench core --json "$out/core-$stamp.json"
echo
bash scripts/with-postgres.sh "$bin" bench pipeline --notifications "$n" \
    --workers "${BENCH_WORKERS:-1}" --json "$out/pipeline-$stamp.json"
echo
# Latency at half load: paced at half the rate the workers just sustained after
# their first send (the p99 enqueue→accepted target), at most 100,000.
rate="$(sed -n 's/.*"rate_after_first_send":\([0-9.]*\).*/\1/p' "$out/pipeline-$stamp.json")"
if [ -n "$rate" ]; then
    half="$(awk -v r="$rate" 'BEGIN { printf "%d", r / 2 }')"
    echo "pipeline at half load: $half notifications/s (half of $rate)"
    bash scripts/with-postgres.sh "$bin" bench pipeline --notifications "$((n < 100000 ? n : 100000))" \
        --workers "${BENCH_WORKERS:-1}" --rate "$half" --json "$out/pipeline-half-$stamp.json"
else
    echo "no rate_after_first_send in $out/pipeline-$stamp.json; half-load run skipped" >&2
    exit 1
fi
# PostgreSQL's cost depends on the ids' shape: the same run with time-ordered
# (UUID version 7) ids, which producers are advised to use (schemas/README.md).
echo "pipeline with time-ordered ids"
bash scripts/with-postgres.sh "$bin" bench pipeline --notifications "$n" \
    --workers "${BENCH_WORKERS:-1}" --ids time-ordered --json "$out/pipeline-v7-$stamp.json"
# The tracked figures and their targets (docs/benchmarks.md), from this run's JSON files.
field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"; }
floor_ratio="$(field "$out/send-$stamp.json" ratio_to_floor)"
send_us="$(field "$out/send-$stamp.json" our_us_per_request)"
worker_us="$(field "$out/pipeline-$stamp.json" worker_us_per_notification)"
pg_us="$(field "$out/pipeline-$stamp.json" postgres_us_per_notification)"
pg_v7_us="$(field "$out/pipeline-v7-$stamp.json" postgres_us_per_notification)"
p99="$(field "$out/pipeline-half-$stamp.json" enqueue_to_accepted_p99_ms)"
machine="$(sed -n 's/.*"machine":"\([^"]*\)".*/\1/p' "$out/send-$stamp.json")"
echo
echo "summary (machine: ${machine:-?}; compare runs on one machine only)"
echo "  bench send: our CPU per request / the libcurl floor's   ${floor_ratio:-?} ×   (target ≤ 1.10)"
awk -v w="$worker_us" -v s="$send_us" 'BEGIN { if (s > 0) printf "  pipeline worker µs per notification / bench send    %.3f ×   (%s / %s µs; target ≤ 1.25)\n", w / s, w, s }'
# Where the worker's extra CPU is: its curl loop thread against bench send's,
# and everything else (Swift's task pool, Kafka and libpq threads) against
# bench send's task pool (the load driver, translation).
worker_curl="$(field "$out/pipeline-$stamp.json" worker_us_per_notification_curl)"
send_curl="$(field "$out/send-$stamp.json" us_per_request_curl)"
send_all="$(field "$out/send-$stamp.json" us_per_request)"
awk -v w="$worker_us" -v wc="$worker_curl" -v s="$send_all" -v sc="$send_curl" 'BEGIN {
    if (wc > 0 && sc > 0) {
        printf "    of which the curl loop thread                        %.3f ×   (%s / %s µs)\n", wc / sc, wc, sc
        printf "    of which the rest (task pool, Kafka, libpq)          %.1f / %.1f µs\n", w - wc, s - sc
    }
}'
echo "  PostgreSQL server CPU per notification                  ${pg_us:-?} µs   (target ≤ 15; random ids)"
echo "    with time-ordered ids (UUID version 7)                ${pg_v7_us:-?} µs"
echo "  half-load p99 enqueue→accepted                          ${p99:-?} ms   (target ≤ 50)"
echo "JSON results in $out/"
