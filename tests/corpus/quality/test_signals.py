"""The signals (every measure of every document) against the filters that read them, on real text.

* Measuring in full changes no verdict and no kept text.
* :func:`judge` over the measures gives the filters' own verdicts, under the preset and under
  thresholds moved up and down (each moved threshold is run through the filters themselves).
* Each measure equals what the filter compares for a document it was asked to judge.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from contentx_udf.corpus.quality import signals
from contentx_udf.corpus.quality.batch import apply_filters
from contentx_udf.corpus.quality.settings import PRESETS, Settings
from contentx_udf.corpus.quality.verdicts import ratio
from tests.conftest import SHARED, shared_or_skip

WCXB = SHARED / "data" / "wcxb-dev" / "ground-truth"
UDHR = SHARED / "data" / "udhr2"


def _real_texts(limit: int = 400) -> list[str]:
    """Main texts of the WCXB dev pages (real web pages), plus the same texts cut in odd places
    and doubled, so that every rule has documents on both sides of its threshold."""
    directory = shared_or_skip(WCXB)
    texts = []
    for path in sorted(directory.glob("*.json"))[:limit]:
        text = json.loads(path.read_text())["ground_truth"].get("main_content") or ""
        texts.append(text)
    extra = [t[: len(t) // 7] for t in texts[:60]] + [t + "\n" + t for t in texts[60:100]]
    extra += ["\n".join(t.splitlines()[::3]) for t in texts[100:140]]
    return texts + extra


#: UDHR translations (file stem, language label) in several scripts and segmenters.
UDHR_LANGUAGES = (
    ("deu", "de"),
    ("fra", "fr"),
    ("rus", "ru"),
    ("arb", "ar"),
    ("cmn", "zh"),
    ("jpn", "ja"),
    ("tha", "th"),
    ("hin", "hi"),
    ("kor", "ko"),
    ("spa", "es"),
    ("zul", "zu"),
    ("tur", "tr"),
)


def _udhr_texts() -> tuple[list[str], list[str]]:
    """UDHR translations (for the fineweb2 profiles) whole and cut short, with their language."""
    directory = shared_or_skip(UDHR)
    texts, languages = [], []
    for stem, language in UDHR_LANGUAGES:
        path = directory / f"{stem}.txt"
        if path.exists():
            text = path.read_text(encoding="utf-8")
            texts += [text[:6000], text[:400], "\n".join(text.splitlines()[:40] * 2)]
            languages += [language] * 3
    return texts, languages


@pytest.fixture(scope="module")
def real():
    texts = _real_texts()
    rng = np.random.default_rng(7)
    scores = rng.uniform(0.3, 1.0, len(texts))
    return texts, ["en"] * len(texts), scores


def _check_equal(texts, languages, scores, settings: Settings) -> None:
    normal = apply_filters(texts, None, languages, scores, settings)
    full = apply_filters(texts, None, languages, scores, settings, full=True)
    assert normal.drop.to_pylist() == full.drop.to_pylist()
    assert normal.rule.to_pylist() == full.rule.to_pylist()
    kept = normal.kept
    assert np.array_equal(
        np.asarray(normal.text.to_pylist(), dtype=object)[kept],
        np.asarray(full.text.to_pylist(), dtype=object)[kept],
    )
    stored = signals.to_arrow(full.measures, len(texts))
    m = {
        name: stored.field(name).to_numpy(zero_copy_only=False) for name in [s.name for s in signals.SIGNALS]
    }
    m["url_match"] = np.asarray(stored.field("url_match").to_pylist(), dtype=object)
    keys = None if full.profile is None else np.asarray(full.profile.to_pylist(), dtype=object)
    drop, rule = signals.judge(m, np.asarray(scores, float), settings, keys)
    assert drop == normal.drop.to_pylist()
    assert rule == normal.rule.to_pylist()
    return m


@pytest.mark.parametrize("preset", ["fineweb", "gopher", "c4", "none"])
def test_judging_the_measures_gives_the_filters_verdicts(real, preset):
    texts, languages, scores = real
    settings = PRESETS[preset]
    if preset == "gopher":
        settings = replace(settings, min_language_score=0.5)
    m = _check_equal(texts, languages, scores, settings)
    assert len(m["gr_chars"]) == len(texts)


def _moved(settings: Settings, factor: float) -> Settings:
    """Every numeric threshold of the enabled filters times ``factor`` (ratios capped at 1)."""
    import dataclasses

    sections = {}
    for name in ("gopher_repetition", "gopher_quality", "c4", "fineweb"):
        section = getattr(settings, name)
        values = {}
        for f in dataclasses.fields(section):
            value = getattr(section, f.name)
            kind = f.metadata.get("kind")
            if f"{name}.{f.name}" in signals.MEASURE_KEYS or isinstance(value, bool) or value is None:
                continue  # a measure-defining key (C4's line rules ...): a re-cut keeps it
            if kind == "ratio":
                values[f.name] = min(1.0, value * factor)
            elif kind == "count":
                values[f.name] = int(round(value * factor))
            elif kind == "length":
                values[f.name] = value * factor
        sections[name] = replace(section, **values)
    return replace(settings, **sections)


@pytest.mark.parametrize("factor", [0.5, 0.8, 1.25, 2.0])
def test_moved_thresholds_judged_from_the_measures_equal_the_filters(real, factor):
    texts, languages, scores = real
    base = PRESETS["fineweb"]
    measured = apply_filters(texts, None, languages, scores, base, full=True)
    stored = signals.to_arrow(measured.measures, len(texts))
    m = {s.name: stored.field(s.name).to_numpy(zero_copy_only=False) for s in signals.SIGNALS}
    m["url_match"] = np.asarray(stored.field("url_match").to_pylist(), dtype=object)
    moved = replace(_moved(base, factor), min_language_score=min(1.0, 0.65 * factor))
    truth = apply_filters(texts, None, languages, scores, moved)
    drop, rule = signals.judge(m, np.asarray(scores, float), moved, None)
    assert rule == truth.rule.to_pylist()
    # the moved thresholds change the verdicts (the test would see a judge that ignores them)
    assert drop != measured.drop.to_pylist()


def test_the_measures_are_what_the_rules_compare(real):
    texts, languages, scores = real
    full = apply_filters(texts, None, languages, scores, PRESETS["fineweb"], full=True)
    m = full.measures
    normal = apply_filters(texts, None, languages, scores, PRESETS["fineweb"])
    rules = normal.rule.to_pylist()
    # dup_line_frac drops exactly the documents whose stored share is above 0.3 among those it judged
    judged = np.array([r is None or r.startswith("gopher_repetition") for r in rules])
    judged &= np.asarray(scores) >= 0.65
    share = ratio(m["gr_dup_lines"], m["gr_lines"])
    earlier = np.array(
        [
            r
            in (
                "gopher_repetition.empty",
                "gopher_repetition.dup_para_frac",
                "gopher_repetition.dup_para_char_frac",
            )
            for r in rules
        ]
    )
    fails = np.array([r == "gopher_repetition.dup_line_frac" for r in rules])
    assert np.array_equal(fails, judged & ~earlier & (share > 0.3))
    assert fails.any()
    # FineWeb reads C4's text: its character count is that of the kept text, newlines left out
    kept = normal.kept
    text_chars = np.array([len(t) - t.count("\n") for t in full.text.to_pylist()])
    assert np.array_equal(np.asarray(m["fw_chars"])[kept], text_chars[kept])
    # the stop words: Gopher's English list, distinct
    i = int(np.flatnonzero(kept)[0])
    words = set(full.text[i].as_py().lower().split())
    assert m["gq_stop_words"][i] <= len({"the", "be", "to", "of", "and", "that", "have", "with"} & words) + 8


def test_fineweb2_profiles_are_judged_per_document(real):
    texts, _, scores = real
    utexts, ulanguages = _udhr_texts()
    all_texts = texts[:200] + utexts
    languages = ["en"] * 200 + ulanguages
    all_scores = np.concatenate([scores[:200], np.full(len(utexts), 0.9)])
    _check_equal(all_texts, languages, all_scores, PRESETS["fineweb2"])


def test_the_arrow_types_hold_the_measures():
    t = signals.arrow_type()
    assert [f.name for f in t] == [s.name for s in signals.SIGNALS]
    assert all(f.type in (pa.int32(), pa.int8(), pa.bool_(), pa.string()) for f in t)
    assert signals.ddl().startswith("struct<no_space: boolean")
