#!/usr/bin/env bash
# Creates PushFleet's Kafka topics with Apache Kafka's kafka-topics.sh, which
# must be installed (idempotent: --if-not-exists). Nothing is created by the
# workers themselves. Without Kafka's tools: `pushfleet topics create` (same
# layout and defaults, through librdkafka's Admin API).
#
#   scripts/create-topics.sh --bootstrap-server kafka:9092 [options]
#   scripts/create-topics.sh --dry-run               # print the commands only
#
# Options (each also settable by the environment variable in brackets):
#   --bootstrap-server HOST:PORT  [KAFKA_BOOTSTRAP_SERVER]   default localhost:9092
#   --prefix NAME                 [TOPIC_PREFIX]             default push (= kafka.topic_prefix)
#   --partitions N                [PARTITIONS]               default 12: both lanes' intake, retry
#                                 tiers and parked topics, receipts, devices. Make it >= the most
#                                 workers you will run.
#   --dlq-partitions N            [DLQ_PARTITIONS]           default 3
#   --retry-tiers "A B C"         [RETRY_TIERS]              default "5s 1m 10m" (= retry.tiers[].name)
#   --replication-factor N        [REPLICATION_FACTOR]       default 3
#   --min-insync-replicas N       [MIN_INSYNC_REPLICAS]      default RF-1 (at least 1)
#   --command-config FILE         [KAFKA_COMMAND_CONFIG]     client properties (SASL/TLS)
#   --kafka-topics PATH           [KAFKA_TOPICS]             default kafka-topics.sh
#   --dry-run                                                print, do not run
#
# Two lanes, each with its own topics: interactive (<prefix>.notifications,
# <prefix>.retry.<tier>, <prefix>.parked) and bulk (the same names ending in
# .bulk), for campaigns.
#
# Retention (ms), overridable by RETENTION_<NAME>_MS:
#   notifications 7d   the intake (both lanes): covers a fleet outage of up to a week
#   retry.*       7d   a tier's delay (<= 10 min) plus the slack that matters:
#                      how long the fleet may be down while retries wait, the
#                      same budget as the intake (a retry lost to retention is
#                      a lost push)
#   parked        7d   deliveries a provider could not take yet: held at most a day
#                      by default (retry.max_parked_seconds), a week of slack
#   dlq           30d  time for a person to look and `pushfleet dlq replay`
#   receipts      7d
#   devices       compacted (cleanup.policy=compact): the latest record per key
#                 is kept for ever, a tombstone removes it
set -euo pipefail

bootstrap="${KAFKA_BOOTSTRAP_SERVER:-localhost:9092}"
prefix="${TOPIC_PREFIX:-push}"
partitions="${PARTITIONS:-12}"
dlq_partitions="${DLQ_PARTITIONS:-3}"
retry_tiers="${RETRY_TIERS:-5s 1m 10m}"
replication="${REPLICATION_FACTOR:-3}"
min_isr="${MIN_INSYNC_REPLICAS:-}"
command_config="${KAFKA_COMMAND_CONFIG:-}"
kafka_topics="${KAFKA_TOPICS:-kafka-topics.sh}"
dry_run=0

day=$((24 * 60 * 60 * 1000))
retention_notifications="${RETENTION_NOTIFICATIONS_MS:-$((7 * day))}"
retention_retry="${RETENTION_RETRY_MS:-$((7 * day))}"
retention_parked="${RETENTION_PARKED_MS:-$((7 * day))}"
retention_dlq="${RETENTION_DLQ_MS:-$((30 * day))}"
retention_receipts="${RETENTION_RECEIPTS_MS:-$((7 * day))}"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || { echo "create-topics: $1 needs a value" >&2; exit 2; }; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --bootstrap-server) need_value "$@"; bootstrap="$2"; shift 2 ;;
        --prefix) need_value "$@"; prefix="$2"; shift 2 ;;
        --partitions) need_value "$@"; partitions="$2"; shift 2 ;;
        --dlq-partitions) need_value "$@"; dlq_partitions="$2"; shift 2 ;;
        --retry-tiers) need_value "$@"; retry_tiers="$2"; shift 2 ;;
        --replication-factor) need_value "$@"; replication="$2"; shift 2 ;;
        --min-insync-replicas) need_value "$@"; min_isr="$2"; shift 2 ;;
        --command-config) need_value "$@"; command_config="$2"; shift 2 ;;
        --kafka-topics) need_value "$@"; kafka_topics="$2"; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "create-topics: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

for pair in "partitions:$partitions" "dlq-partitions:$dlq_partitions" "replication-factor:$replication"; do
    value="${pair#*:}"
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "create-topics: --${pair%%:*} must be a positive integer, got '$value'" >&2; exit 2; }
done
for part in "$prefix" $retry_tiers; do
    [[ "$part" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "create-topics: '$part' is not a valid topic name part" >&2; exit 2; }
done
if [[ -z "$min_isr" ]]; then
    min_isr=$((replication > 1 ? replication - 1 : 1))
fi
[[ "$min_isr" =~ ^[1-9][0-9]*$ && "$min_isr" -le "$replication" ]] \
    || { echo "create-topics: --min-insync-replicas must be 1..$replication, got '$min_isr'" >&2; exit 2; }

if [[ $dry_run -eq 0 ]] && ! command -v "$kafka_topics" >/dev/null 2>&1; then
    echo "create-topics: $kafka_topics not found (Apache Kafka's bin/; set KAFKA_TOPICS or --kafka-topics)" >&2
    exit 1
fi

# create TOPIC PARTITIONS CONFIG...
create() {
    local topic="$1" count="$2"
    shift 2
    local cmd=("$kafka_topics" --bootstrap-server "$bootstrap" --create --if-not-exists
        --topic "$topic" --partitions "$count" --replication-factor "$replication"
        --config "min.insync.replicas=$min_isr")
    [[ -n "$command_config" ]] && cmd+=(--command-config "$command_config")
    local config
    for config in "$@"; do cmd+=(--config "$config"); done
    if [[ $dry_run -eq 1 ]]; then
        local line
        printf -v line '%q ' "${cmd[@]}"
        echo "${line% }"
    else
        echo "create-topics: $topic ($count partitions, RF $replication)"
        "${cmd[@]}"
    fi
}

for lane in "" ".bulk"; do
    create "$prefix.notifications$lane" "$partitions" "retention.ms=$retention_notifications" "cleanup.policy=delete"
    for tier in $retry_tiers; do
        create "$prefix.retry.$tier$lane" "$partitions" "retention.ms=$retention_retry" "cleanup.policy=delete"
    done
    create "$prefix.parked$lane" "$partitions" "retention.ms=$retention_parked" "cleanup.policy=delete"
done
create "$prefix.dlq" "$dlq_partitions" "retention.ms=$retention_dlq" "cleanup.policy=delete"
create "$prefix.receipts" "$partitions" "retention.ms=$retention_receipts" "cleanup.policy=delete"
create "$prefix.devices" "$partitions" "cleanup.policy=compact" "min.compaction.lag.ms=3600000"
