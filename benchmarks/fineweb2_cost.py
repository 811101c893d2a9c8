"""Cost of the ``fineweb2`` preset against ``fineweb`` on the same documents.

    python benchmarks/fineweb2_cost.py [--lines 20] [--batch 1024] [--rounds 3] [--seed 0]

Documents: the UDHR in the 388 languages of ``../shared/data/udhr2`` (public domain), each cut
into documents of ``--lines`` non-blank, stripped lines, labelled by the corpus job's identifier
(lid.176, :func:`contentx_udf.text.language.detect_language`), shuffled so that every batch mixes
languages as a crawl does (with 388 languages evenly, many more per batch than a real crawl
holds: a hard case for the grouping by language).  Both presets run on every document (no
language-score cut, so that both filter the same texts) in batches of ``--batch`` rows (the
corpus job's Arrow batch), after one warm-up batch; ``--rounds`` alternated rounds; CPU time
(``time.process_time``).  Prints ms per document of each and their ratio per round and the
median ratio, and the documents per profile fallback.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf.corpus.quality.batch import apply_filters  # noqa: E402
from contentx_udf.corpus.quality.settings import PRESETS  # noqa: E402
from contentx_udf.text.language import detect_language  # noqa: E402

UDHR = REPO.parent / "shared" / "data" / "udhr2"


def documents(lines_per_doc: int, seed: int) -> tuple[pa.Array, pa.Array]:
    """The UDHR cut into documents, with their lid.176 labels, shuffled."""
    texts, labels = [], []
    for path in sorted(UDHR.glob("*.txt")):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for start in range(0, len(lines), lines_per_doc):
            text = "\n".join(lines[start : start + lines_per_doc])
            texts.append(text)
            labels.append(detect_language(text)[0])
    order = np.random.default_rng(seed).permutation(len(texts))
    return pa.array([texts[i] for i in order]), pa.array([labels[i] for i in order], pa.string())


def ms_per_document(texts: pa.Array, labels: pa.Array, settings, batch: int) -> float:
    apply_filters(texts[:batch], None, labels[:batch], None, settings)
    started = time.process_time()
    for i in range(0, len(texts), batch):
        apply_filters(texts[i : i + batch], None, labels[i : i + batch], None, settings)
    return (time.process_time() - started) * 1000 / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts, labels = documents(args.lines, args.seed)
    fineweb = dataclasses.replace(PRESETS["fineweb"], min_language_score=None)
    fineweb2 = dataclasses.replace(PRESETS["fineweb2"], overrides=(("min_language_score", "off"),))
    result = apply_filters(texts, None, labels, None, fineweb2)
    print(
        f"{len(texts)} documents, {len(set(labels.to_pylist()))} lid.176 labels, "
        f"{len(set(result.profile.to_pylist()))} profiles; fallbacks: "
        f"{dict(Counter(result.fallback.to_pylist()))}"
    )
    ratios = []
    for round_ in range(args.rounds):
        a = ms_per_document(texts, labels, fineweb, args.batch)
        b = ms_per_document(texts, labels, fineweb2, args.batch)
        ratios.append(b / a)
        print(f"round {round_ + 1}: fineweb {a:.3f} ms/doc, fineweb2 {b:.3f} ms/doc, ratio {b / a:.2f}")
    print(f"median ratio fineweb2 / fineweb: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
