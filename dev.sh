#!/usr/bin/env bash
# Developer entry point: sets up .venv (Python 3.11+) on first use, then runs a task.
#   ./dev.sh test            run the test suite
#   ./dev.sh sample          run the Spark job on the bundled sample WARC (embedded local Spark)
#   ./dev.sh job ARGS...     run the job with your own arguments
#   ./dev.sh evaluate ARGS.. run `contentx evaluate`
#   ./dev.sh docs [ARGS...]  build the manual into site/ (strict; installs the docs extra on first use)
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
VENV=".venv"

needs_build() {
    local f
    for f in pyproject.toml setup.py contentx_udf/*/*.pyx contentx_udf/*/*.pxd; do
        [ "$f" -nt "$VENV/.installed" ] && return 0
    done
    [ -f "$VENV/.no-extension" ] && return 1  # (built without a compiler: not again each run)
    extension_built || return 0
    return 1
}

extension_built() {
    local f
    for f in contentx_udf/*/*.pyx; do
        compgen -G "${f%.pyx}.*.so" >/dev/null || return 1
    done
}

setup() {
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "dev.sh: Python 3.11 or newer is required ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
        exit 2
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        echo "dev.sh: creating $VENV (first run only)" >&2
        # (the venv's own pip, as Python bundles it: upgrading it first cost a fresh clone 4-5 s)
        "$PYTHON" -m venv "$VENV"
    fi
    bytecode_cache
    # re-install when pyproject.toml, setup.py or a compiled pass (.pyx, .pxd) changed since the last
    # install, or when the compiled extension is missing (the editable install builds it in place)
    if [ ! -f "$VENV/.installed" ] || needs_build; then
        echo "dev.sh: installing contentx and its test dependencies into $VENV (uv or pip)," \
            "compiling its passes and writing the JVM's class archive (first run: about 1.5 minutes" \
            "on a quiet 2-core machine, more under load; log: $VENV/install.log)" >&2
        install >"$VENV/install.log" 2>&1 || {
            cat "$VENV/install.log" >&2
            echo "dev.sh: installing contentx failed (log above, also in $VENV/install.log)" >&2
            exit 1
        }
        touch "$VENV/.installed"
        if extension_built; then
            rm -f "$VENV/.no-extension"
        else
            touch "$VENV/.no-extension"
            echo "dev.sh: the compiled passes were not built (no C compiler or Python headers?):" \
                "the pure-Python code runs, slower (build log: $VENV/install.log)" >&2
        fi
    fi
    export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$PWD/$VENV/bin/python}"
    if [ "${1:-}" = background ]; then jvm_archive_in_background; else jvm_archive; fi
}

# The dependencies of .[test] (pyproject.toml) are installed by uv, a fast installer from PyPI put
# into the venv first (pip installed them in 68 s on a fresh 2-core machine, uv in 28 s), or by pip
# where uv cannot be had or fails (CONTENTX_INSTALLER=pip: pip only). Beside them, from the start,
# pip builds contentx itself (--no-deps: its compiled passes need only the build's own Cython),
# niced, so that the installer keeps its core; then the JVM's class archive is written
# (early_jvm_archive, about 40 s of one core) while the compiler finishes. Measured from empty
# caches on the 2-core machine, alternating: the install 67-91 s (4 runs, mean 80 s), against
# 81-103 s (mean 90 s) with the compiler started after the dependencies, beside the archive.
# --no-compile: Python compiles a module's bytecode when it is first imported (pip compiling every
# file of every package took 26 of a fresh install's 67 s on 2 cores); uv compiles none either.
install() {
    "$VENV/bin/python" -c 'import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["test"]))' >"$VENV/requirements.txt"
    nice -n 10 "$VENV/bin/python" -m pip install -q --no-compile --no-deps -e . &
    local compiler=$!
    local built=0 dependencies=0
    install_dependencies "$VENV/requirements.txt" || dependencies=$?
    if [ "$dependencies" -eq 0 ]; then early_jvm_archive; fi
    wait "$compiler" || built=$?
    [ "$dependencies" -eq 0 ] || return "$dependencies"
    return "$built"
}

install_dependencies() {
    local pip=("$VENV/bin/python" -m pip install -q --no-compile)
    if [ "${CONTENTX_INSTALLER:-uv}" != pip ] && "${pip[@]}" uv; then
        # (pip's own index settings, where set in the environment, are uv's too)
        local index=()
        [ -n "${PIP_INDEX_URL:-}" ] && index+=(--index-url "$PIP_INDEX_URL")
        [ -n "${PIP_EXTRA_INDEX_URL:-}" ] && index+=(--extra-index-url "$PIP_EXTRA_INDEX_URL")
        if "$VENV/bin/python" -m uv pip install --python "$VENV/bin/python" -q ${index[@]+"${index[@]}"} -r "$1"; then
            return 0
        fi
        echo "dev.sh: uv could not install the dependencies; pip does" >&2
    fi
    "${pip[@]}" -r "$1"
}

# Whether a class archive can be written: not turned off, and a Java to write it with.
jvm_archive_possible() {
    [ "${CONTENTX_JVM_ARCHIVE:-}" != off ] && { [ -n "${JAVA_HOME:-}" ] || command -v java >/dev/null; }
}

# ... and not failed since the last install (not retried until the next).
jvm_archive_wanted() {
    jvm_archive_possible || return 1
    ! { [ -f "$VENV/.no-jvm-archive" ] && [ "$VENV/.no-jvm-archive" -nt "$VENV/.installed" ]; }
}

# The class archive, written during the install as soon as the dependencies are in: from the
# sources (PYTHONPATH) while pip compiles the passes, which the archive does not need
# (CONTENTX_PURE_PYTHON=1: the jobs run their Python code; the archive holds the JVM's classes).
# Its JVM uses about one core for 40 s, beside the compiler's; every job and test JVM afterwards
# maps the archive from its start. A failure here is tried once more after the install (jvm_archive).
early_jvm_archive() {
    jvm_archive_possible || return 0
    PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" CONTENTX_PURE_PYTHON=1 \
        "$VENV/bin/python" -m contentx_udf jvm-archive --if-missing >"$VENV/jvm-archive.log" 2>&1 || true
    return 0
}

# Compiled bytecode is kept, under .venv: pip installs without it (--no-compile, above), so each
# module is compiled when first imported and its .pyc written for the next process. Where
# PYTHONDONTWRITEBYTECODE is set (as in many container images) nothing would ever be written, and
# every process (each job, each Spark Python worker, each of the suite's hundreds) compiled the
# modules it imports again: a small `contentx run` 7.5 -> 5.3 CPU-s, a small corpus build 14.2 ->
# 11.4 CPU-s with the cache. So the processes started here write it, but only under
# $VENV/pycache (PYTHONPYCACHEPREFIX): no __pycache__ appears beside the sources, as the setting
# wanted. A prefix of your own is kept.
bytecode_cache() {
    if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
        unset PYTHONDONTWRITEBYTECODE
        export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$PWD/$VENV/pycache}"
    fi
}

# The driver JVM's class archive (`contentx jvm-archive`, docs/performance.md): written once per
# Java and Spark install, then every job's JVM starts about 4 s sooner. Not retried after a
# failure until the next install; CONTENTX_JVM_ARCHIVE=off skips it.
jvm_archive() {
    jvm_archive_wanted || return 0
    if ! "$VENV/bin/python" -m contentx_udf jvm-archive --if-missing; then
        touch "$VENV/.no-jvm-archive"
        echo "dev.sh: no JVM class archive: jobs start a few seconds slower" >&2
    fi
}

# For the suite, when the archive is missing though the install is done (the cache was emptied, or
# the install's attempt failed): it is written while the tests run, not before them (its JVM uses
# about one core for 40-50 s), and tests/runtime/test_class_archive.py, the one test that needs
# it, waits for it (CONTENTX_JVM_ARCHIVE_LOCK, a lock the writer holds). The jobs the suite starts
# before it is written start without it (the cluster tests' JVMs cost about twice the CPU).
jvm_archive_in_background() {
    jvm_archive_wanted || return 0
    command -v flock >/dev/null || { jvm_archive; return 0; }
    "$VENV/bin/python" -c 'import sys; from contentx_udf.runtime.class_archive import existing
sys.exit(existing() is None)' 2>/dev/null && return 0
    export CONTENTX_JVM_ARCHIVE_LOCK="$PWD/$VENV/.jvm-archive.lock"
    echo "dev.sh: writing the JVM's class archive while the tests run (once; log: $VENV/jvm-archive.log)" >&2
    # (the lock is taken here, before the suite starts, and held by the writer until it exits)
    exec 9>"$CONTENTX_JVM_ARCHIVE_LOCK"
    flock 9
    (
        if ! "$VENV/bin/python" -m contentx_udf jvm-archive --if-missing >"$VENV/jvm-archive.log" 2>&1; then
            touch "$VENV/.no-jvm-archive"
        fi
    ) &
    exec 9>&-
}

task="${1:-}"
shift || true
case "$task" in
    test)
        setup background
        # in parallel (pytest-xdist): one worker more than the cores, at most 4 (each has its own
        # Spark JVM, 1 GiB of heap; two workers on 2 cores left about a fifth of the CPU idle while
        # their tests waited on JVMs starting, jobs and clusters); whole test files per worker, those
        # starting clusters and jobs handed out first (tests/conftest.py). CONTENTX_TEST_WORKERS=0
        # runs in this one process; a later -n/--dist of your own wins.
        workers="${CONTENTX_TEST_WORKERS:-$(n=$(nproc 2>/dev/null || echo 2); echo $((n < 3 ? n + 1 : 4)))}"
        exec "$VENV/bin/python" -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
        ;;
    sample)
        setup
        out="${CONTENTX_SAMPLE_OUT:-output/sample}"
        exec "$VENV/bin/python" jobs/extract_warc.py --input tests/data/sample.warc.gz \
            --output "$out" --overwrite "$@"
        ;;
    job)
        setup
        exec "$VENV/bin/python" jobs/extract_warc.py "$@"
        ;;
    evaluate)
        setup
        exec "$VENV/bin/contentx" evaluate "$@"
        ;;
    docs)
        setup
        # the docs extra of pyproject.toml (MkDocs), installed on demand and again when it changes
        if [ ! -f "$VENV/.docs-installed" ] || [ pyproject.toml -nt "$VENV/.docs-installed" ]; then
            echo "dev.sh: installing the docs extra (MkDocs) into $VENV" >&2
            "$VENV/bin/python" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))' >"$VENV/docs-requirements.txt"
            if ! "$VENV/bin/python" -m pip install -q -r "$VENV/docs-requirements.txt" >"$VENV/docs-install.log" 2>&1; then
                cat "$VENV/docs-install.log" >&2
                echo "dev.sh: installing the docs extra failed (log above, also in $VENV/docs-install.log)" >&2
                exit 1
            fi
            touch "$VENV/.docs-installed"
        fi
        # (NO_MKDOCS_2_WARNING: Material for MkDocs prints a notice of its end of life, May 2027, on
        # every build; Zensical, its successor, reads the same mkdocs.yml)
        NO_MKDOCS_2_WARNING=1 exec "$VENV/bin/mkdocs" build --strict "$@"
        ;;
    *)
        sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
