"""Near dedup on real text: this version's banded MinHash beside the implementation it replaced.

    python benchmarks/near_dedup_agreement.py [--reference ca6f7cb] [--work /tmp/contentx-agreement]

The shared WARCs (``../shared/warc/real/*`` and the two fixtures, plus a near-duplicate variant of
the scale fixture whose pages each get a dated paragraph after ``<body>`` and lose their last
paragraph) go through the extraction job (``combined``).  On that table the corpus job runs with
``--dedup near`` twice: as it is now, and as it was at ``--reference`` (the last commit with
Spark's ``MinHashLSH`` + ``approxSimilarityJoin`` + an exact Jaccard check, run from a
``git archive`` of that commit).  Prints both kept counts, the documents kept by one and not the
other, and for each difference the exact word 5-gram Jaccard similarity of the pair that explains
it (the document's best match among the other version's kept documents).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import add_dated_paragraph, rewrite_html  # noqa: E402

SHARED = REPO.parent / "shared" / "warc"
LAST_P = re.compile(rb"<p[ >](?:(?!<p[ >]).)*</p>(?=(?:(?!<p[ >]).)*$)", re.S | re.I)


def variant(src: Path, dst: Path) -> int:
    """``src``'s HTML pages with a dated paragraph added after ``<body>`` and the last paragraph
    removed (its other records left out)."""
    return rewrite_html(src, dst, lambda html: add_dated_paragraph(LAST_P.sub(b"", html, count=1)), False)


def reference_tree(commit: str, dst: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "contentx_udf", "jobs", "conf"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dst, filter="data")


def kept(spark, corpus: Path) -> dict[tuple[str, int], str]:
    rows = spark.read.parquet(str(corpus / "documents")).select("warc_filename", "warc_record_offset", "text")
    return {(Path(r[0]).name, r[1]): r[2] for r in rows.collect()}


def shingles(text: str) -> set[tuple[str, ...]]:
    words = [w for w in re.split(r"[\W_]+", text.lower()) if w]
    return {tuple(words[i : i + 5]) for i in range(len(words) - 4)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", default="ca6f7cb", help="the commit of the previous implementation")
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-agreement"))
    args = parser.parse_args()
    from contentx_udf.corpus import job as corpus_job
    from contentx_udf.corpus.config import CorpusConfig
    from contentx_udf.runtime.session import spark_session
    from contentx_udf.spark import job as extract_job
    from contentx_udf.spark.config import JobConfig

    shutil.rmtree(args.work, ignore_errors=True)
    warcs = args.work / "warcs"
    warcs.mkdir(parents=True)
    inputs = sorted(p for p in (SHARED / "real").iterdir() if ".warc" in p.name)
    inputs += [SHARED / "fixtures" / "scrapinghub-scale.warc.gz", SHARED / "fixtures" / "hostile.warc.gz"]
    for p in inputs:
        shutil.copy(p, warcs / p.name)
    pages = variant(SHARED / "fixtures" / "scrapinghub-scale.warc.gz", warcs / "scale-variant.warc.gz")
    spark = spark_session("contentx-near-agreement")
    table = args.work / "table"
    extract_job.run(JobConfig(inputs=[str(warcs)], output=str(table), progress_seconds=0), spark=spark)
    ok = spark.read.parquet(str(table)).where("method = 'combined' and status = 'ok'").count()

    new = corpus_job.run(CorpusConfig(inputs=[str(table)], output=str(args.work / "new")), spark)
    ref_src = args.work / "reference"
    reference_tree(args.reference, ref_src)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from contentx_udf.corpus.job import main; sys.exit(main(sys.argv[2:]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ref_src), "--input", str(table), "--output", str(args.work / "old")],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-3000:])
        return 1
    old = json.loads((args.work / "old" / "_report.json").read_text())
    new_docs, old_docs = kept(spark, args.work / "new"), kept(spark, args.work / "old")
    print(
        f"{len(inputs)} shared WARCs + a near variant of the scale fixture ({pages} pages changed): "
        f"{ok} ok rows"
    )
    bands = f"{new['minhash']['bands']}x{new['minhash']['rows']}"
    print(f"this version (MinHash {bands}): kept {new['kept']}, dropped {new['dropped']}")
    print(f"reference {args.reference} (MinHashLSH + exact Jaccard >= 0.8): kept {old['kept']}")
    print(f"  dropped {old['dropped']}")
    sets = {key: shingles(text) for key, text in {**new_docs, **old_docs}.items()}
    for name, mine, theirs in (
        ("only this version", new_docs, old_docs),
        ("only the reference", old_docs, new_docs),
    ):
        extra = sorted(set(mine) - set(theirs))
        print(f"kept by {name}: {len(extra)}")
        for key in extra:
            best = max(((jaccard(sets[key], sets[k]), k) for k in theirs if k != key), default=(0.0, None))
            print(
                f"  {key[0]}@{key[1]}: best match in the other's kept set {best[1]} at Jaccard {best[0]:.3f}"
            )
    agree = len(set(new_docs) & set(old_docs)) / max(len(set(new_docs) | set(old_docs)), 1)
    print(f"RESULT new_kept={new['kept']} reference_kept={old['kept']} kept_set_agreement={agree:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
