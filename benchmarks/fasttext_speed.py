"""CPU per page of the two compiled fastText predictors, for comparing two builds of them (e.g.
before and after a change to ``contentx_udf/text/_fasttext.pxd``, ``_quality.pyx`` or ``_lid.pyx``):
``quality_scores`` with three quality models and ``detect_language`` (lid.176), on the 1,678 pages
of ``../shared/data`` extracted with ``combined`` (cached: benchmarks/_quality_pages.py).

    python benchmarks/fasttext_speed.py --models DIR [--rounds 5]
    PYTHONPATH=OTHER_CHECKOUT python benchmarks/fasttext_speed.py --models DIR   # the other build

The models (``bigram.bin``, ``bigram.ftz``, ``ova.bin``: benchmarks/quality_scores.py's, trained
by fasttext-new) are trained into ``--models`` when it has none, and reused as they are otherwise,
so that two builds score the same files (fastText's training is not deterministic across runs).
The package is imported from ``PYTHONPATH`` (or the installed one), not from this file's checkout.
Prints the package's location, then one RESULT line: the median and the lowest CPU milliseconds
per page of ``--rounds`` rounds, each a pass over every page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

_PATH = list(sys.path)
from _quality_pages import DEFAULT_CACHE, extracted_pages, training_sets  # noqa: E402

sys.path[:] = _PATH  # (_quality_pages puts this checkout first: the build compared is PYTHONPATH's)

MODELS = ("bigram.bin", "bigram.ftz", "ova.bin")


def models_in(directory: Path) -> dict[str, Path]:
    """The models of :data:`MODELS` in ``directory``, trained there when missing."""
    paths = {name: directory / name for name in MODELS}
    if not all(p.exists() for p in paths.values()):
        from quality_scores import train_models

        directory.mkdir(parents=True, exist_ok=True)
        pos, neg = training_sets(extracted_pages(DEFAULT_CACHE), directory)
        train_models(pos, neg, directory)
    return paths


def per_page(run, texts: list[str], rounds: int) -> tuple[float, float]:
    """``(median, lowest)`` CPU milliseconds per page of ``run(texts)`` over ``rounds`` rounds."""
    times = []
    for _ in range(rounds):
        t = time.process_time()
        run(texts)
        times.append(1000 * (time.process_time() - t) / len(texts))
    return statistics.median(times), min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, required=True, help="the models' directory (trained if empty)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="extracted pages (JSON lines)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import contentx_udf
    from contentx_udf import QualityModel, quality_scores
    from contentx_udf.text.language import detect_language, lid_status

    texts = [p["text"] for p in extracted_pages(args.cache)]
    paths = models_in(args.models)
    print(f"package: {Path(contentx_udf.__file__).parent}; language id: {lid_status()}")
    fields = [f"pages={len(texts)}"]
    for name, path in paths.items():
        if not QualityModel.open(path).compiled:
            sys.exit("the compiled quality scorer is off: nothing to time")
        quality_scores(texts[:20], path)  # (opened and warm)
        median, low = per_page(lambda docs, p=path: quality_scores(docs, p), texts, args.rounds)
        fields.append(f"{name}_ms={median:.4f} {name}_min_ms={low:.4f}")
    detect_language(texts[0])
    median, low = per_page(lambda docs: [detect_language(t) for t in docs], texts, args.rounds)
    fields.append(f"lid_ms={median:.4f} lid_min_ms={low:.4f}")
    print("RESULT " + " ".join(fields))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
