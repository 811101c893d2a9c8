"""What the per-language report costs the corpus job: the same build with and without it, alternated.

    python benchmarks/by_language_cost.py [--docs 50000] [--pairs 2] [--dedup near]

A synthetic extraction table (``tests/corpus/tables.py``'s random articles; 10 % exact copies;
three languages) is built once; then the corpus job runs on it ``--pairs`` times with the report's
per-language aggregation and as many times without it (``reason_counts`` replaced by an empty
frame), alternated, after one uncounted pair that warms up, in one SparkSession (the repository's
conf/: local[*,3]).  Prints each run's seconds and the median ratio.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contentx_udf.corpus import job as corpus_job  # noqa: E402
from contentx_udf.corpus import stages  # noqa: E402
from contentx_udf.corpus.config import CorpusConfig  # noqa: E402
from tests.corpus.tables import article, table_row, write_table  # noqa: E402


def build_table(directory: Path, docs: int) -> None:
    rows = []
    for i in range(docs):
        seed = i if i % 10 else max(i - 1, 0)  # every tenth document copies the one before
        row = table_row(f"https://site{i % 97}.example/{i}", "\n".join(article(seed, 12)), offset=i)
        row["language"], row["language_score"] = ("en", "de", "fr")[i % 3], 0.9  # no model run
        rows.append(row)
    write_table(directory, "combined", rows)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--dedup", default="near", choices=("exact", "near"))
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    from contentx_udf.runtime.session import prepare_driver

    prepare_driver()  # the workers run this interpreter
    spark = (
        SparkSession.builder.appName("contentx-by-language-cost")  # master: conf/spark-defaults.conf
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="contentx-bylang-"))
    started = time.perf_counter()
    build_table(work / "table", args.docs)
    print(f"table of {args.docs} documents written in {time.perf_counter() - started:.0f} s")
    real, real_check = stages.reason_counts, stages.check_totals

    def without(dropped, outcomes, *rest):
        return real(dropped.limit(0), outcomes.limit(0), *rest)

    times: dict[str, list[float]] = {"with": [], "without": []}
    for pair in range(-1, args.pairs):  # pair -1 warms the JVM and the Python workers up, uncounted
        for mode in ("with", "without") if pair % 2 else ("without", "with"):
            stages.reason_counts = real if mode == "with" else without
            stages.check_totals = real_check if mode == "with" else (lambda *a: None)
            config = CorpusConfig(
                inputs=[str(work / "table")], output=str(work / "corpus"), dedup=args.dedup, overwrite=True
            )
            t0 = time.perf_counter()
            report = corpus_job.run(config, spark)
            seconds = time.perf_counter() - t0
            if pair < 0:
                continue
            times[mode].append(seconds)
            print(f"pair {pair + 1} {mode:7s}: {seconds:6.1f} s, kept {report['kept']}, "
                  f"languages in report {len(report['by_language'])}")  # fmt: skip
    ratio = statistics.median(w / o for w, o in zip(times["with"], times["without"], strict=True))
    print(f"RESULT docs={args.docs} dedup={args.dedup} median_with_over_without={ratio:.3f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
