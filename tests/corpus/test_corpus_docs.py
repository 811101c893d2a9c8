"""The manual's "Building a corpus" page (docs/corpus.md) stays true: its detection curve is the
banding formula's, the bands it names for each threshold are the ones the job chooses, and its
fineweb2 table is the codes' mapping. (Its options are in the generated reference: tests/test_docs.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contentx_udf.corpus import minhash as mh
from contentx_udf.corpus.config import FN_WEIGHT, FP_WEIGHT

PAGE = Path(__file__).resolve().parents[2] / "docs" / "corpus.md"


def section() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_detection_curve_is_the_banding_formula():
    lines = section().splitlines()
    header = next(line for line in lines if line.startswith("   | Jaccard similarity of a pair"))
    similarities = [float(x) for x in header.split("|")[2:-1]]
    rows = [line for line in lines if line.strip().startswith("| caught, ")]
    assert len(rows) == 3
    for row in rows:
        bands, rows_per_band = map(int, re.search(r"caught, (\d+) x (\d+)", row).groups())
        values = [x.strip() for x in row.split("|")[2:-1]]
        expected = [f"{mh.candidate_probability(s, bands, rows_per_band):.3f}" for s in similarities]
        assert values == expected, row


@pytest.mark.parametrize(
    "threshold, bands, rows", [(0.8, 12, 9), (0.7, 18, 6), (0.75, 16, 7), (0.85, 10, 11), (0.9, 8, 14)]
)
def test_bands_named_for_each_threshold_are_the_chosen_ones(threshold, bands, rows):
    text = " ".join(section().split())
    named = f"{bands} bands of {rows} rows" if threshold == 0.8 else f"{threshold}: {bands} x {rows}"
    assert named in text
    assert mh.optimal_bands(threshold, mh.NUM_PERM, FP_WEIGHT, FN_WEIGHT) == (bands, rows)


def test_fineweb2_language_table_is_the_codes():
    """Each row of the fineweb2 table: the lid.176 code's key (codes.LID_KEYS, the usual one
    first), that key's segmenter (segment.segmenter_for) and its profile's fallback."""
    from contentx_udf.corpus.quality.profiles import resolve
    from contentx_udf.text.codes import LID_KEYS
    from contentx_udf.text.segment import segmenter_for

    lines = section().splitlines()
    start = lines.index("| lid.176 code | FineWeb-2 key | segmenter | fallback |")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("| `"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    codes = "de fr es it pt nl pl ru uk cs tr ar fa hi vi id zh ja ko th en".split()
    expected = []
    for code in codes:
        key = LID_KEYS[code][0]
        fallback = resolve(key)[1]
        expected.append([code, key, segmenter_for(key), fallback or "—"])
    table = "\n".join(
        f"| `{c}` | `{k}` | `{s}` | {'—' if f == '—' else f'`{f}`'} |" for c, k, s, f in expected
    )
    assert rows == expected, "docs/corpus.md table should read:\n" + table
