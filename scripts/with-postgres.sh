#!/usr/bin/env bash
# Runs CMD [ARGS...] against a throwaway PostgreSQL server.
#
# Starts a fresh cluster in a temporary directory on a free 127.0.0.1 port
# (tuned for tests: no fsync; PUSHFLEET_PG_CONF adds settings), creates
# database `pushfleet`, exports
#   PUSHFLEET_DATABASE_URL  postgresql://postgres@127.0.0.1:PORT/pushfleet
#   PUSHFLEET_PG_DATADIR    the data directory (to stop/restart the server)
#   PUSHFLEET_PG_BIN        the server's bin directory (pg_ctl, postgres, ...)
#   PUSHFLEET_PG_PORT       the port
#   PUSHFLEET_PG_RUN_AS     the user the server runs as (empty: current user)
# runs the command, then always stops the server and deletes the directory.
# Exits with the command's exit code.
set -euo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

# Newest installed server (Debian layout), or PG_BIN from the environment.
pg_bin="${PG_BIN:-}"
if [[ -z "$pg_bin" ]]; then
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then pg_bin="$dir"; fi
    done
fi
if [[ -z "$pg_bin" || ! -x "$pg_bin/initdb" ]]; then
    echo "with-postgres: no PostgreSQL server binaries found under /usr/lib/postgresql/*/bin (set PG_BIN)" >&2
    exit 1
fi

# initdb and postgres refuse to run as root: use the postgres user then.
run_as=""
if [[ "$(id -u)" -eq 0 ]]; then
    run_as="postgres"
    if ! id -u "$run_as" >/dev/null 2>&1; then
        echo "with-postgres: running as root but there is no '$run_as' user" >&2
        exit 1
    fi
fi
as_pg() {
    if [[ -n "$run_as" ]]; then runuser -u "$run_as" -- "$@"; else "$@"; fi
}

tmp=""
started=0
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [[ "$started" -eq 1 ]]; then
        as_pg "$pg_bin/pg_ctl" -D "$datadir" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    fi
    # Last resort if pg_ctl failed (e.g. the data dir was mangled by a test).
    if [[ -f "$datadir/postmaster.pid" ]]; then
        local pid
        pid="$(head -n1 "$datadir/postmaster.pid" 2>/dev/null || true)"
        if [[ "$pid" =~ ^[0-9]+$ ]]; then kill -9 "$pid" 2>/dev/null || true; fi
    fi
    if [[ -n "$tmp" ]]; then rm -rf "$tmp"; fi
    exit "$rc"
}
trap cleanup EXIT
source "$(dirname "$0")/run-child.sh"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pushfleet-pg.XXXXXX")"
datadir="$tmp/data"
sockdir="$tmp/sock"
logfile="$tmp/server.log"
mkdir -p "$sockdir"
if [[ -n "$run_as" ]]; then chown -R "$run_as" "$tmp"; fi
chmod 700 "$tmp"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"

if ! as_pg "$pg_bin/initdb" -D "$datadir" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 >"$tmp/initdb.log" 2>&1; then
    echo "with-postgres: initdb failed:" >&2
    cat "$tmp/initdb.log" >&2
    exit 1
fi

cat >>"$datadir/postgresql.conf" <<CONF
# pushfleet test-box settings (scripts/with-postgres.sh)
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sockdir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 128MB
CONF
# Extra server settings for one run, e.g. for a profile:
#   PUSHFLEET_PG_CONF="shared_preload_libraries = 'pg_stat_statements'"
if [[ -n "${PUSHFLEET_PG_CONF:-}" ]]; then printf '%s\n' "$PUSHFLEET_PG_CONF" >>"$datadir/postgresql.conf"; fi

started=1
if ! as_pg "$pg_bin/pg_ctl" -D "$datadir" -l "$logfile" -w -t 60 start >/dev/null; then
    echo "with-postgres: server failed to start; log follows:" >&2
    cat "$logfile" >&2 || true
    exit 1
fi

if ! as_pg "$pg_bin/psql" -X -q -h "$sockdir" -p "$port" -U postgres -d postgres \
        -v ON_ERROR_STOP=1 -c 'CREATE DATABASE pushfleet' >/dev/null; then
    echo "with-postgres: could not create database pushfleet; log follows:" >&2
    cat "$logfile" >&2 || true
    exit 1
fi

export PUSHFLEET_DATABASE_URL="postgresql://postgres@127.0.0.1:$port/pushfleet"
export PUSHFLEET_PG_DATADIR="$datadir"
export PUSHFLEET_PG_BIN="$pg_bin"
export PUSHFLEET_PG_PORT="$port"
export PUSHFLEET_PG_RUN_AS="$run_as"
echo "with-postgres: $("$pg_bin/postgres" --version) at $PUSHFLEET_DATABASE_URL" >&2

# The command's exit status becomes ours; a signal is forwarded to it.
run_child "$@"
