#!/usr/bin/env bash
# Runs CMD [ARGS...] beside a throwaway Tansu broker (a real Kafka-compatible
# broker, in memory) on a free 127.0.0.1 port, as with-postgres.sh does for
# PostgreSQL. Exports
#   PUSHFLEET_TANSU_BOOTSTRAP     127.0.0.1:PORT
#   PUSHFLEET_TANSU_LIBRARY_PATH  a directory holding a current librdkafka.so.1:
#                                 the LD_LIBRARY_PATH of every process that talks
#                                 to Tansu (Debian bookworm's 2.0.2 cannot)
# runs the command, then always stops the broker and deletes its directory.
# Exits with the command's exit code. Tansu and the library come from
# scripts/kafka-tools.sh (installed by scripts/install-deps.sh).
set -euo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
tansu="$(bash "$here/kafka-tools.sh" tansu)"
library="$(bash "$here/kafka-tools.sh" librdkafka)"

tmp=""
broker=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [[ -n "$broker" ]]; then
        kill -TERM "$broker" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$broker" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$broker" 2>/dev/null || true
        wait "$broker" 2>/dev/null || true
    fi
    if [[ -n "$tmp" ]]; then rm -rf "$tmp"; fi
    exit "$rc"
}
trap cleanup EXIT
source "$here/run-child.sh"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pushfleet-tansu.XXXXXX")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
url="tcp://127.0.0.1:$port"
"$tansu" broker --listener-url "$url" --advertised-listener-url "$url" --storage-engine memory://tansu/ \
    --cluster-id pushfleet-test >"$tmp/tansu.log" 2>&1 &
broker=$!

# Ready when it accepts a connection (it prints "ready in" once listening).
ready=0
for _ in $(seq 100); do
    if ! kill -0 "$broker" 2>/dev/null; then break; fi
    if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $port), 0.2).close()" 2>/dev/null; then
        ready=1
        break
    fi
    sleep 0.1
done
if [[ "$ready" -ne 1 ]]; then
    echo "with-tansu: the broker did not start; log follows:" >&2
    cat "$tmp/tansu.log" >&2 || true
    exit 1
fi

export PUSHFLEET_TANSU_BOOTSTRAP="127.0.0.1:$port"
export PUSHFLEET_TANSU_LIBRARY_PATH="$library"
echo "with-tansu: $("$tansu" --version) at $PUSHFLEET_TANSU_BOOTSTRAP, librdkafka from $(readlink "$library/librdkafka.so.1")" >&2

# The command's exit status becomes ours; a signal is forwarded to it.
run_child "$@"
