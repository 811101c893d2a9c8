"""Quality of contentx methods beside trafilatura and resiliparse, in one run, with each gold set's metric.

    python benchmarks/compare_quality.py --gold ../shared/data/wcxb-dev --folds 5
    python benchmarks/compare_quality.py --gold ../shared/data/scrapinghub

Scores the full-text baseline, ``cectd-ds``, the shipped ``combined`` model in its three modes
(balanced, precision, recall), trafilatura in its three (default, ``favor_precision``,
``favor_recall``) and resiliparse (when installed: ``pip install -e .[bench]``) on the same pages
with the same metric (:func:`contentx_udf.evaluation.score_runs`).  With ``--folds K`` also
``combined`` by K-fold cross-validation grouped by domain in each mode (the model retrained per
fold, ``train`` extra): on the set the shipped model was trained on (WCXB dev) only those rows
say how it does on unseen sites.  Prints the tables of ``contentx evaluate`` and, last, one
``RESULT`` line of F1s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from extract_speed import optional_competitors  # noqa: E402  (trafilatura, resiliparse)

from contentx_udf import evaluation, training  # noqa: E402
from contentx_udf.settings import CHOICES  # noqa: E402

MODES = CHOICES["combined", "mode"]


def trafilatura_modes() -> dict:
    """trafilatura with ``favor_precision`` and with ``favor_recall`` (when installed)."""
    try:
        import trafilatura
    except ImportError:
        return {}
    return {
        f"trafilatura {name}": lambda page, name=name: trafilatura.extract(
            page.decode("utf-8", "replace"), **{f"favor_{name}": True}
        )
        for name in ("precision", "recall")
    }


class _Result:
    """What ``run_method`` needs from an extraction."""

    def __init__(self, text: str):
        self.text, self.status, self.error = text, ("ok" if text.strip() else "empty"), None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=0, help="also combined by K-fold CV (0: no)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pages = evaluation.load_gold(args.gold)
    results = evaluation.evaluate(pages, [evaluation.FULL_TEXT, "cectd-ds", "combined"])
    for mode in MODES[1:]:
        runs = evaluation.run_method(pages, "combined", params={"mode": mode})
        results.append(evaluation.score_runs(pages, f"combined {mode}", runs))
    for name, fn in {**optional_competitors(), **trafilatura_modes()}.items():
        runs = evaluation.run_method(pages, name, lambda html, method, fn=fn, **_: _Result(fn(html) or ""))
        results.append(evaluation.score_runs(pages, name, runs))
    if args.folds:
        results += training.cross_validated_result(pages, args.folds, seed=args.seed, threads=2, modes=MODES)
    print(evaluation.format_table(results), end="")
    print("RESULT " + " ".join(f"{r.method.replace(' ', '_')}={r.f1:.3f}" for r in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
