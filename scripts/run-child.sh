# Sourced by with-postgres.sh and with-tansu.sh (not run on its own).
# `run_child CMD [ARGS...]` runs the command in the background and waits, so a
# signal reaches the caller's trap promptly (the trap forwards it), then exits
# with the command's exit code; the caller's EXIT trap cleans up.
child=""
on_signal() {
    # Background jobs of a non-interactive shell ignore SIGINT, so forward TERM.
    if [[ -n "$child" ]]; then
        kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

run_child() {
    local rc
    set +e
    "$@" &
    child=$!
    wait "$child"
    rc=$?
    set -e
    child=""
    exit "$rc"
}
