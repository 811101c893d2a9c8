"""The thresholds of ``combined``'s ``precision`` and ``recall`` modes, chosen by cross-validation.

    python benchmarks/combined_modes.py [--gold ../shared/data/wcxb-dev] [--folds 5] [--cache FILE]

1. The WCXB development pages' blocks and labels (:func:`contentx_udf.training.build_rows`).
2. Out-of-fold block and page-type probabilities: grouped K-fold cross-validation, the model
   retrained per fold on the other sites (:func:`~contentx_udf.training.out_of_fold`; the
   ``train`` extra).  ``--cache FILE`` keeps steps 1-2 (pickle) for another run.
3. Every page's word precision, recall and F1 at every page threshold of a fine grid; then, for
   each mode, the per-type thresholds of :func:`~contentx_udf.training.search_mode_thresholds`:
   the best mean F1 among thresholds on the mode's side of balanced whose mean precision (recall)
   is at least balanced's + 0.03.

Prints each mode's thresholds (to copy into ``training.MODE_THRESHOLDS``) and its mean precision,
recall, F1 and F1 per page type on the grid (the page threshold rounded to 0.0125; ``contentx
evaluate --folds 5 --modes balanced,precision,recall`` scores the modes exactly), and a ``RESULT``
line.  Never run on scrapinghub: it is the independent check.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import evaluation, training  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gold", type=Path, default=REPO.parent / "shared" / "data" / "wcxb-dev")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="pickle of the rows and out-of-fold probabilities")
    args = parser.parse_args()
    if "scrapinghub" in str(args.gold):
        sys.exit("scrapinghub is the independent check: choose thresholds on WCXB dev")
    started = time.perf_counter()
    pages = evaluation.load_gold(args.gold)
    if args.cache and args.cache.exists():
        rows, oof = pickle.loads(args.cache.read_bytes())
    else:
        rows = training.build_rows(pages, processes=2)
        print(f"{len(rows)} pages: blocks and features in {time.perf_counter() - started:.0f} s", flush=True)
        oof = training.out_of_fold(rows, args.folds, seed=args.seed, threads=2, progress=print)
        if args.cache:
            args.cache.write_bytes(pickle.dumps((rows, oof)))
    classes = next(o.classes for o in oof if o is not None)
    scores = training.threshold_scores(rows, oof, [p.text for p in pages])
    types = training.page_type_matrix(oof)
    balanced = [training.PAGE_TYPE_THRESHOLDS.get(c, training.DEFAULT_THRESHOLD) for c in classes]
    kinds = np.array([p.page_type or "article" for p in pages])
    chosen = {"balanced": (tuple(balanced), training.mode_result(scores, types, balanced))}
    for goal in ("precision", "recall"):
        chosen[goal] = training.search_mode_thresholds(scores, types, balanced, goal)
    parts = []
    for mode, (thresholds, (precision, recall, f1)) in chosen.items():
        table = dict(zip(classes, thresholds, strict=True))
        f1_pages = training.page_scores(scores, types, thresholds)[:, 2]
        by_type = {t: float(f1_pages[kinds == t].mean()) for t in sorted(set(kinds))}
        print(f"{mode}: P {precision:.4f} R {recall:.4f} F1 {f1:.4f}")
        print(f"  thresholds {table}")
        print("  F1 by type " + ", ".join(f"{t} {v:.3f}" for t, v in by_type.items()))
        parts += [f"{mode}_p={precision:.4f}", f"{mode}_r={recall:.4f}", f"{mode}_f1={f1:.4f}"]
    print(f"{time.perf_counter() - started:.0f} s")
    print("RESULT " + " ".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
