#!/usr/bin/env bash
# The README's packed-environment recipe, checked on a local standalone cluster:
#   tools/packed_env_check.sh                    build the archive, run the cluster test with it
#   tools/packed_env_check.sh --build-only FILE  only build the archive (used by the test)
# A fresh venv gets contentx installed from this checkout (not editable: venv-pack refuses
# editable installs) and venv-pack; the archive is shipped with `--archives FILE#env`.
# Slow (a fresh PySpark install and a ~550 MB archive), so it is not part of ./dev.sh test.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

build() {
    local archive="$1" work
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' RETURN
    mkdir "$work/src"
    git ls-files -z | xargs -0 tar cf - | tar xf - -C "$work/src"  # the checkout, not its build debris
    local t0=$SECONDS
    "$PYTHON" -m venv "$work/venv"
    "$work/venv/bin/pip" install -q "$work/src[s3]" venv-pack
    local t1=$SECONDS
    rm -f "$archive"
    "$work/venv/bin/venv-pack" -q -p "$work/venv" -o "$archive"
    echo "packed_env_check: install $((t1 - t0)) s, venv-pack $((SECONDS - t1)) s," \
        "archive $(du -m "$archive" | cut -f1) MB: $archive" >&2
}

if [ "${1:-}" = "--build-only" ]; then
    build "$(realpath -m "${2:?usage: $0 --build-only FILE}")"
    exit 0
fi
archive="$(mktemp -d)/contentx-env.tar.gz"
trap 'rm -rf "$(dirname "$archive")"' EXIT
start=$SECONDS
build "$archive"
CONTENTX_PACKED_ENV=1 CONTENTX_PACKED_ENV_ARCHIVE="$archive" \
    ./dev.sh test tests/spark/test_cluster.py -m packed_env -q
echo "packed_env_check: total $((SECONDS - start)) s" >&2
