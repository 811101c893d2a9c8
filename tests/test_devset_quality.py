"""Quality floors on the scrapinghub development set (181 pages), shingle F1 only.

Floors live in ``tests/quality_floors.toml``::

    [floors]
    "cetd-ds" = 0.80

Every method of ``contentx_udf.METHODS`` needs a floor, and every method must beat the full-text baseline.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from contentx_udf import METHODS
from contentx_udf.evaluation import FULL_TEXT, evaluate, format_table, load_gold

from .conftest import DEVSET, SHARED
from .gold_sample import wcxb_sample

FLOORS = Path(__file__).resolve().parent / "quality_floors.toml"

pytestmark = [
    pytest.mark.devset,
    pytest.mark.skipif(not DEVSET.is_dir(), reason=f"development set not found at {DEVSET}"),
]


@pytest.fixture(scope="module")
def results():
    """Shingle scores of full-text and every method (LCS/CleanEval skipped)."""
    pages = load_gold(DEVSET)
    assert len(pages) == 181
    res = evaluate(pages, [FULL_TEXT, *METHODS], lcs=False)
    print("\n" + format_table(res))  # shown with -s or on failure
    return {r.method: r for r in res}


@pytest.fixture(scope="module")
def floors() -> dict[str, float]:
    if not FLOORS.is_file():
        pytest.fail(f"{FLOORS} is missing: it must hold a [floors] table of method = minimum shingle F1")
    with FLOORS.open("rb") as f:
        table = tomllib.load(f).get("floors")
    if not isinstance(table, dict) or not table:
        pytest.fail(f"{FLOORS} has no [floors] table")
    return {str(k): float(v) for k, v in table.items()}


def test_baseline_full_text(results):
    # IMPLEMENTATION-NOTES.md: full text scores F1 0.671 with this metric
    assert results["full-text"].f1 == pytest.approx(0.671, abs=0.005)


def test_every_method_meets_its_floor(results, floors):
    methods = [m for m in results if m != "full-text"]
    missing = [m for m in methods if m not in floors]
    unknown = [m for m in floors if m not in METHODS]
    below = [
        f"{m}: F1 {results[m].f1:.3f} < floor {floors[m]:.3f}"
        for m in methods
        if m in floors and results[m].f1 < floors[m]
    ]
    problems = below + [f"{m}: no floor in {FLOORS.name}" for m in missing]
    problems += [f"{m}: floor for an unknown method" for m in unknown]
    assert not problems, "\n".join(problems)


def test_every_method_beats_full_text(results):
    base = results["full-text"].f1
    worse = [
        f"{m}: F1 {r.f1:.3f} <= full-text {base:.3f}"
        for m, r in results.items()
        if m != "full-text" and r.f1 <= base
    ]
    assert not worse, "\n".join(worse)


def test_no_errors(results):
    errors = [f"{m}: {r.n_errors} errors, first {r.first_error}" for m, r in results.items() if r.n_errors]
    assert not errors, "\n".join(errors)


WCXB = SHARED / "data" / "wcxb-dev"
#: combined's word-F1 floor on the fixed WCXB sample below (measured with the shipped model, less 0.01).
WCXB_SAMPLE_FLOOR = 0.883
#: Every 15th page of WCXB dev (100 pages of every type).  The shipped model was TRAINED on all of
#: WCXB dev, these pages included: this is a regression gate on seen pages, not a quality claim
#: (docs/methods.md gives the 5-fold cross-validated figures, where no page is scored by a model that
#: saw its site).
WCXB_SAMPLE_STEP = 15


@pytest.mark.skipif(not WCXB.is_dir(), reason=f"WCXB dev not found at {WCXB}")
def test_combined_on_a_fixed_wcxb_sample():
    pages = wcxb_sample(WCXB, lambda ids: ids[::WCXB_SAMPLE_STEP])  # (load_gold(WCXB)[::STEP])
    assert len(pages) == 100 and len({p.page_type for p in pages}) == 7
    res = {r.method: r for r in evaluate(pages, ["combined", "cectd-ds"])}
    print("\n" + format_table(list(res.values())))
    assert res["combined"].n_errors == 0
    assert res["combined"].f1 >= WCXB_SAMPLE_FLOOR
    assert res["combined"].f1 > res["cectd-ds"].f1 + 0.05
