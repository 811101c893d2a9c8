"""Build vs build --signals vs select with a changed threshold, on corpus_scale.py's table.

    python benchmarks/select_speed.py --docs 100000 [--work /tmp/contentx-select] [--keep-tables]

For each ``--docs N``, on :mod:`corpus_scale`'s synthetic table (real pages' lines, 10 % exact and
10 % near copies), one after the other in the same run, each a subprocess as ``corpus_scale.py``
runs the job (the repository's ``conf/``):

1. ``build``: ``jobs/build_corpus.py --filters fineweb --dedup near``;
2. ``signals``: the same with ``--signals``;
3. ``select``: ``jobs/select_corpus.py --from <signals build> --filter-set CHANGE`` (a changed
   threshold, default ``gopher_quality.min_words=100``);
4. ``full``: the build with that change, whose documents ``select``'s must equal (URL and text
   hash of every document, and the report's counts).

Prints the seconds of each, the ratios signals/build (goal <= 1.15 at 100,000) and select/build
(goal <= 1/3 at 100,000, <= 1/4 at 1,000,000), the bytes per document of ``signals/`` and
``texts/``, and a ``RESULT`` line.  A benchmark, not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus_scale import PeakRss, line_pool, write_table  # noqa: E402

#: CPU seconds (user + system) of each step's process tree, by step name (filled by :func:`_run`)
CPU: dict[str, float] = {}
_TICK = os.sysconf("SC_CLK_TCK")


class CpuTree(PeakRss):
    """:class:`PeakRss` that also keeps each process of the tree's last seen CPU seconds (user +
    system, ``/proc/PID/stat``, polled every 0.2 s; the JVM is not waited for by the driver, so
    ``wait4`` would miss it): their sum is the step's CPU time, less moved by other processes'
    load than the wall time (not unmoved: they share caches and memory bandwidth)."""

    def __init__(self, pid: int):
        super().__init__(pid)
        self.seen: dict[int, float] = {}
        self._cpu = threading.Thread(target=self._poll_cpu, daemon=True)

    def __enter__(self) -> CpuTree:
        super().__enter__()
        self._cpu.start()
        return self

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._cpu.join()

    def _poll_cpu(self) -> None:
        while not self._stop.is_set():
            for p in self._tree():
                try:
                    fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                self.seen[p] = (int(fields[11]) + int(fields[12])) / _TICK
            self._stop.wait(0.2)

    @property
    def cpu(self) -> float:
        return sum(self.seen.values())


def _run(cmd: list[str], log: Path, name: str = "") -> float:
    """Wall seconds of ``cmd``; its CPU seconds (:class:`CpuTree`) go to :data:`CPU` under ``name``."""
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    os.sync()  # (the previous run's output flushed first, not written back during this one)
    started = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        with CpuTree(proc.pid) as tree:
            code = proc.wait()
    if code != 0:
        raise SystemExit(f"failed (exit {code}): {' '.join(cmd)}; log {log}")
    CPU[name] = tree.cpu
    return time.perf_counter() - started


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def _documents(path: Path) -> set[tuple[str, str]]:
    import pyarrow.parquet as pq

    table = pq.read_table(str(path / "documents"), columns=["url", "text_hash"])
    return set(zip(table.column("url").to_pylist(), table.column("text_hash").to_pylist(), strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, nargs="+", default=[100_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-select"))
    parser.add_argument("--keep-tables", action="store_true", help="reuse tables already written in --work")
    parser.add_argument("--change", default="gopher_quality.min_words=100", help="the --filter-set of select")
    parser.add_argument("--filters", default="fineweb", help="the preset of the builds")
    parser.add_argument("--no-full", action="store_true", help="skip step 4 (the equality check)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    lines = line_pool(args.work)
    build = [sys.executable, str(REPO / "jobs" / "build_corpus.py")]
    select = [sys.executable, str(REPO / "jobs" / "select_corpus.py")]
    parts = []
    for n in sorted(args.docs):
        table = args.work / f"table-{n}"
        meta = args.work / f"table-{n}.json"
        if not (args.keep_tables and meta.exists()):
            shutil.rmtree(table, ignore_errors=True)
            originals = write_table(n, lines, table, None)
            meta.write_text(json.dumps({"originals": originals}))
        common = ["--input", str(table), "--filters", args.filters, "--dedup", "near", "--overwrite"]
        out = {k: args.work / f"{k}-{n}" for k in ("build", "signals", "select", "full")}
        t = {}
        t["build"] = _run(
            [*build, *common, "--output", str(out["build"])], args.work / f"build-{n}.log", "build"
        )
        print(f"{n} docs: build {t['build']:.1f} s", flush=True)
        t["signals"] = _run(
            [*build, *common, "--output", str(out["signals"]), "--signals"],
            args.work / f"signals-{n}.log",
            "signals",
        )
        print(f"{n} docs: build --signals {t['signals']:.1f} s", flush=True)
        t["select"] = _run(
            [*select, "--from", str(out["signals"]), "--output", str(out["select"]), "--overwrite",
             "--filter-set", args.change],
            args.work / f"select-{n}.log", "select",
        )  # fmt: skip
        print(f"{n} docs: select --filter-set {args.change} {t['select']:.1f} s", flush=True)
        if args.no_full:
            out["full"], t["full"] = out["select"], float("nan")
        else:
            t["full"] = _run(
                [*build, *common, "--output", str(out["full"]), "--filter-set", args.change],
                args.work / f"full-{n}.log",
                "full",
            )
            print(f"{n} docs: build --filter-set {args.change} {t['full']:.1f} s", flush=True)
        same = _documents(out["select"]) == _documents(out["full"])
        reports = [json.loads((out[k] / "_report.json").read_text()) for k in ("select", "full", "build")]
        counts_same = (
            reports[0]["dropped"] == reports[1]["dropped"] and reports[0]["kept"] == reports[1]["kept"]
        )
        if args.no_full:
            same = counts_same = None
        # whether each run's driver JVM mapped the class archive (contentx jvm-archive): both or neither
        archive = {
            k: json.loads((out[k] / "_report.json").read_text()).get("jvm_class_archive", "?").split()[0]
            for k in ("build", "signals", "select") + (() if args.no_full else ("full",))
        }
        print(f"{n} docs: JVM class archive " + ", ".join(f"{k} {v}" for k, v in archive.items()), flush=True)
        signals_b, texts_b = _bytes(out["signals"] / "signals"), _bytes(out["signals"] / "texts")
        docs_b = _bytes(out["build"] / "documents")
        verdict = "skipped" if same is None else same and counts_same
        ratios = f"signals/build {t['signals'] / t['build']:.3f}, select/build {t['select'] / t['build']:.3f}"
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in CPU.items())
        print(
            f"{n} docs: CPU seconds {cpu}; CPU signals/build {CPU['signals'] / CPU['build']:.3f}, "
            f"select/build {CPU['select'] / CPU['build']:.3f}; load average now {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        print(
            f"{n} docs: {ratios} (select/full {t['select'] / t['full']:.3f}); select == full build: "
            f"{verdict} (kept {reports[0]['kept']} vs {reports[1]['kept']}; the build kept "
            f"{reports[2]['kept']}); signals/ {signals_b / n:.1f} B/doc, texts/ {texts_b / n:.1f} B/doc, "
            f"documents/ {docs_b / n:.1f} B/doc",
            flush=True,
        )
        parts += [
            f"docs={n}",
            *(f"{k}_s={v:.1f}" for k, v in t.items()),
            f"signals_ratio={t['signals'] / t['build']:.3f}",
            f"select_ratio={t['select'] / t['build']:.3f}",
            *(f"{k}_cpu_s={v:.1f}" for k, v in CPU.items()),
            f"signals_cpu_ratio={CPU['signals'] / CPU['build']:.3f}",
            f"select_cpu_ratio={CPU['select'] / CPU['build']:.3f}",
            f"select_equals_full={'skipped' if same is None else int(same and counts_same)}",
            f"signals_bytes_per_doc={signals_b / n:.1f}",
            f"texts_bytes_per_doc={texts_b / n:.1f}",
            "jvm_class_archive=" + ("/".join(sorted(set(archive.values())))),
        ]
    print("RESULT " + " ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
