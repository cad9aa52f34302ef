#!/usr/bin/env bash
# Runs the whole test suite against a throwaway PostgreSQL (scripts/with-postgres.sh)
# and a throwaway Tansu broker (scripts/with-tansu.sh: the end-to-end broker tier
# runs on it as well as on librdkafka's mock cluster), keeps the full output in
# .build/test-output.log, and on failure ends with a summary of the failing
# tests, so the last lines of a CI log say what failed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
log=.build/test-output.log
# Line-buffered, so a test that never ends shows in the log (and in CI) as the last one started.
bash scripts/with-postgres.sh bash scripts/with-tansu.sh stdbuf -oL -eL "${SWIFT:-swift}" test ${BUILD_FLAGS:-} --skip-build "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
    echo
    echo "=================== test failures (full output: $log) ==================="
    grep -E "error: |: error|Test Case .* failed|✘|Fatal error|Crash|signal [0-9]+|timed out" "$log" \
        | grep -v "passed" | cut -c1-600 | head -60
    echo "swift test exited with $rc"
fi
exit $rc
