#!/usr/bin/env bash
# Renders a `pushfleet report --out DIR` page in a real browser (Debian's
# headless Chromium) to a PNG, as a person opening it would see it.
#   scripts/report-screenshot.sh DIR/report.html OUT.png [WIDTH,HEIGHT]
# With DUMP_DOM=FILE it also writes the DOM Chromium built from the page.
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 REPORT.html OUT.png [WIDTH,HEIGHT]" >&2
    exit 64
fi
html=$1 png=$2 size=${3:-1280,2600}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
    echo "report-screenshot: chromium is not installed (scripts/install-deps.sh installs it)" >&2
    exit 69
fi
[[ -f $html ]] || { echo "report-screenshot: no such file: $html" >&2; exit 66; }
url="file://$(realpath "$html")"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$profile")
rm -f "$png"
timeout 120 "$browser" "${flags[@]}" --window-size="$size" --screenshot="$png" "$url" >"$profile/log" 2>&1 || true
if [[ ! -s $png ]]; then
    echo "report-screenshot: chromium wrote no screenshot; its log:" >&2
    tail -20 "$profile/log" >&2
    exit 1
fi
if [[ -n ${DUMP_DOM:-} ]]; then
    timeout 120 "$browser" "${flags[@]}" --dump-dom "$url" >"$DUMP_DOM" 2>"$profile/log"
fi
echo "$png"
