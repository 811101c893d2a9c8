"""Corpus job on copies of the scale WARC, and language agreement with Common Crawl.

    python benchmarks/corpus_speed.py [--copies 10] [--work /tmp/contentx-corpus-bench]

1. Writes ``--copies`` copies of ``../shared/warc/fixtures/scrapinghub-scale.warc.gz`` plus a
   near-duplicate variant (every HTML page gets an "Updated on ..." paragraph after ``<body>``),
   runs the extraction job (``cectd-ds``) on them, then the corpus job (``--dedup near``), and
   prints both jobs' records/s and whether one document per distinct page was kept (distinct
   pages: distinct ``text_hash`` of the ``ok`` rows of one copy).
2. Runs the extraction job on the real Common Crawl WARCs of ``../shared/warc/real`` and prints
   how often ``language`` equals the first code of Common Crawl's ``content_languages`` (CLD2)
   on pages with 200+ characters of text (goal: at least 90 %).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import add_dated_paragraph, rewrite_html  # noqa: E402

from contentx_udf.corpus import job as corpus_job  # noqa: E402
from contentx_udf.corpus.config import CorpusConfig  # noqa: E402
from contentx_udf.runtime.session import spark_session  # noqa: E402
from contentx_udf.spark import job as extract_job  # noqa: E402
from contentx_udf.spark.config import JobConfig  # noqa: E402

SHARED = REPO.parent / "shared" / "warc"
SCALE = SHARED / "fixtures" / "scrapinghub-scale.warc.gz"
CC_WARCS = [
    SHARED / "real" / "cc-2020-34__resiliparse-warcfile.warc.gz",
    SHARED / "real" / "cc-2024-22__whirlwind.warc.gz",
]


def near_variant(src: Path, dst: Path) -> int:
    """Copy ``src`` with a dated paragraph added to every HTML response; returns pages changed."""
    return rewrite_html(src, dst, add_dated_paragraph)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-corpus-bench"))
    args = parser.parse_args()
    if not SCALE.exists():
        sys.exit(f"missing {SCALE}")
    shutil.rmtree(args.work, ignore_errors=True)
    warcs = args.work / "warcs"
    warcs.mkdir(parents=True)
    for i in range(args.copies):
        shutil.copy(SCALE, warcs / f"copy{i:02d}.warc.gz")
    variant_pages = near_variant(SCALE, warcs / "variant.warc.gz")

    spark = spark_session("contentx-corpus-bench")
    table = args.work / "table"
    summary = extract_job.run(
        JobConfig(inputs=[str(warcs)], output=str(table), methods=("cectd-ds",), progress_seconds=0),
        spark=spark,
    )
    extract_rows = sum(sum(s.values()) for s in summary["rows_by_method_status"].values())
    extract_rps = extract_rows / summary["elapsed_seconds"]
    one_copy = spark.read.parquet(str(table)).where("status = 'ok' and warc_filename like '%copy00.warc.gz'")
    distinct = one_copy.select("text_hash").distinct().count()
    # a variant page whose original gave no text (status empty) is a page of its own
    variant = spark.read.parquet(str(table)).where("status = 'ok' and warc_filename like '%variant.warc.gz'")
    new_pages = variant.join(one_copy.select("url"), "url", "left_anti").count()
    distinct += new_pages

    started = time.perf_counter()
    report = corpus_job.run(
        CorpusConfig(inputs=[str(table)], output=str(args.work / "corpus"), method="cectd-ds", dedup="near"),
        spark,
    )
    corpus_seconds = time.perf_counter() - started
    print(f"scale WARC x{args.copies} + a near-duplicate variant ({variant_pages} pages changed)")
    print(
        f"extraction job: {extract_rows} rows in {summary['elapsed_seconds']} s = {extract_rps:.1f} rows/s "
        f"(records/s {summary['records_per_second']})"
    )
    print(
        f"corpus job: {report['input_rows']} rows in {corpus_seconds:.1f} s = "
        f"{report['input_rows'] / corpus_seconds:.1f} rows/s"
    )
    print(f"dropped: {report['dropped']}")
    verdict = "yes" if report["kept"] == distinct else "NO"
    print(
        f"kept {report['kept']} documents, distinct pages {distinct} (one copy's distinct texts + "
        f"{new_pages} variant page(s) whose original had no text): "
        f"one per distinct page: {verdict}"
    )

    cc_table = args.work / "cc-table"
    extract_job.run(
        JobConfig(
            inputs=[str(p) for p in CC_WARCS], output=str(cc_table), methods=("cectd-ds",), progress_seconds=0
        ),
        spark=spark,
    )
    rows = (
        spark.read.parquet(str(cc_table))
        .where("status = 'ok' and content_languages is not null and text_length >= 200")
        .select("url", "language", "content_languages")
        .collect()
    )
    agree = [r for r in rows if r["language"] == r["content_languages"].split(",")[0]]
    share = len(agree) / len(rows) if rows else float("nan")
    print(
        "language vs Common Crawl content_languages (first), pages with 200+ chars: "
        f"{len(agree)}/{len(rows)} = {share:.0%}"
    )
    for r in rows:
        if r not in agree:
            print(f"  differs: {r['url']}: ours {r['language']}, CC {r['content_languages']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
