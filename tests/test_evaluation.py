"""The evaluation metrics match their definitions (shingles, LCS, CleanEval, WCXB's word metric and
snippet rates), the gold loaders read every layout (scrapinghub, WCXB, plain pairs), and the contentx
CLI (extract, evaluate, run) behaves as documented."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contentx_udf import cli
from contentx_udf.evaluation import (
    FULL_TEXT,
    GoldPage,
    PageRun,
    PageScore,
    WordScore,
    aggregate_shingles,
    bootstrap_std,
    cleaneval_score,
    evaluate,
    format_table,
    full_text,
    lcs_length,
    lcs_scores,
    load_gold,
    score_runs,
    shingle_scores,
    shingles,
    snippet_rate,
    tokens,
    word_scores,
    word_tokens,
)
from contentx_udf.settings import PAGE_TYPES

from .conftest import SHARED, shared_or_skip
from .helpers import write_pairs

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------------
# Reference implementations (plain DP, only for small inputs)
# ------------------------------------------------------------------------------------------------


def dp_lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b, 1):
            keep = row[j]
            row[j] = prev_diag + 1 if x == y else max(row[j], row[j - 1])
            prev_diag = keep
    return row[-1]


def dp_indel_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance with insertions and removals only (CETD §5.2, Eq. 3)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        new = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            new[j] = row[j - 1] if x == y else 1 + min(row[j], new[j - 1])
        row = new
    return row[-1]


# ------------------------------------------------------------------------------------------------
# Tokens and shingles
# ------------------------------------------------------------------------------------------------


def test_tokens_drop_punctuation_keep_case():
    assert tokens("Hello, World! It's 2024.") == ["Hello", "World", "It", "s", "2024"]
    assert tokens("") == [] and tokens(None) == []
    assert tokens("naïve café") == ["naïve", "café"]


def test_shingles_four_grams_and_short_texts():
    assert shingles(tokens("a b c d e")) == {("a", "b", "c", "d"): 1, ("b", "c", "d", "e"): 1}
    assert shingles(tokens("a b c d")) == {("a", "b", "c", "d"): 1}
    # 1-3 tokens: one shorter shingle; no token: none
    assert shingles(tokens("a b c")) == {("a", "b", "c"): 1}
    assert shingles(tokens("a")) == {("a",): 1}
    assert shingles([]) == {}
    assert shingles(tokens("a b c d a b c d"))[("a", "b", "c", "d")] == 2


def test_shingle_scores_missing_text():
    # gold {abcd, bcde}, pred {abcd}: TP 1, FP 0, FN 1 -> normalised by 2
    s = shingle_scores("a b c d", "a b c d e")
    assert (s.tp, s.fp, s.fn) == (0.5, 0.0, 0.5)
    assert (s.precision, s.recall, s.exact) == (1.0, 0.5, False)


def test_shingle_scores_extra_text():
    # gold {abcd}, pred {abcd, bcdx}: TP 1, FP 1, FN 0
    s = shingle_scores("a, b. c d x", "a b c d")
    assert (s.tp, s.fp, s.fn) == (0.5, 0.5, 0.0)
    assert (s.precision, s.recall) == (0.5, 1.0)


def test_shingle_scores_multiset_counts():
    # gold: abcd x2, bcda, cdab, dabc (5 shingles); pred: abcd x1 -> TP 1, FP 0, FN 4
    s = shingle_scores("a b c d", "a b c d a b c d")
    assert s.tp == pytest.approx(0.2) and s.fn == pytest.approx(0.8) and s.fp == 0
    assert s.precision == 1.0 and s.recall == pytest.approx(0.2)


def test_shingle_scores_short_texts():
    s = shingle_scores("a b", "a  b")
    assert (s.tp, s.fp, s.fn, s.precision, s.recall, s.exact) == (1.0, 0.0, 0.0, 1.0, 1.0, True)
    # (a, b) vs (a, b, c) are different single shingles: nothing matches
    s = shingle_scores("a b", "a b c")
    assert (s.tp, s.fp, s.fn, s.precision, s.recall) == (0.0, 0.5, 0.5, 0.0, 0.0)


def test_shingle_scores_empty_sides():
    s = shingle_scores("", "some gold text here")
    assert (s.tp, s.fp, s.fn) == (0.0, 0.0, 1.0)
    assert s.precision is None and s.recall == 0.0  # left out of the precision average
    s = shingle_scores("some predicted text here", "")
    assert s.precision == 0.0 and s.recall is None  # left out of the recall average
    s = shingle_scores("", "  ...  ")
    assert (s.tp, s.fp, s.fn, s.precision, s.recall, s.exact) == (0.0, 0.0, 0.0, None, None, True)


def test_aggregate_shingles_averaging_rules():
    pages = [
        shingle_scores("a b c d", "a b c d e"),  # P 1, R .5
        shingle_scores("a b c d x", "a b c d"),  # P .5, R 1
        shingle_scores("", "a b c d"),  # P -, R 0
        shingle_scores("a b c d", ""),  # P 0, R -
        shingle_scores("w x y z", "w x y z"),  # P 1, R 1, exact
    ]
    agg = aggregate_shingles(pages)
    assert agg["precision"] == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert agg["recall"] == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    p, r = 2.5 / 4, 2.5 / 4
    assert agg["f1"] == pytest.approx(2 * p * r / (p + r))
    assert agg["accuracy"] == pytest.approx(1 / 5)


def test_aggregate_shingles_degenerate():
    assert aggregate_shingles([]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.0}
    agg = aggregate_shingles([shingle_scores("", "gold words")])
    assert agg == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.0}


def test_bootstrap_std():
    same = [PageScore(1.0, 0.0, 0.0, 1.0, 1.0, True)] * 20
    assert bootstrap_std(same, 200) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    mixed = [shingle_scores("a b c d", "a b c d e"), shingle_scores("a b c d x", "a b c d")] * 10
    std = bootstrap_std(mixed, 500, seed=1)
    assert 0.0 < std["precision"] < 0.2 and 0.0 < std["recall"] < 0.2
    assert std == bootstrap_std(mixed, 500, seed=1)


# ------------------------------------------------------------------------------------------------
# LCS and CleanEval
# ------------------------------------------------------------------------------------------------


def test_lcs_by_hand():
    # LCS(a b c d, a x c d e) = a c d
    assert lcs_length(tokens("a b c d"), tokens("a x c d e")) == 3
    p, r, f1 = lcs_scores("a b c d", "a x c d e")
    assert (p, r) == (0.75, 0.6)
    assert f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    # every word occurrence counts (sequence, not bag of words)
    assert lcs_scores("a a a", "a") == (1 / 3, 1.0, 0.5)
    assert lcs_length(["x", "y"], ["y", "x"]) == 1


def test_lcs_empty():
    assert lcs_scores("", "") == (1.0, 1.0, 1.0)
    assert lcs_scores("", "gold") == (0.0, 0.0, 0.0)
    assert lcs_scores("pred", "") == (0.0, 0.0, 0.0)
    assert lcs_length([], ["a"]) == 0


words = st.lists(st.sampled_from("abcde"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(words, words)
def test_lcs_length_matches_dp(a, b):
    assert lcs_length(a, b) == dp_lcs(a, b)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=100, max_size=300), st.lists(st.integers(0, 30), max_size=300))
def test_lcs_length_matches_dp_long(a, b):
    # longer than one machine word either way
    assert lcs_length(a, b) == dp_lcs(a, b)


def test_cleaneval_by_hand():
    # LCS 3, |a| 4, |b| 5: distance 4+5-6 = 3, alignment length 3 + 3 aligned = 6 -> 1 - 3/6
    assert cleaneval_score("a b c d", "a x c d e") == pytest.approx(0.5)
    assert cleaneval_score("same words", "same words") == 1.0
    assert cleaneval_score("", "") == 1.0
    assert cleaneval_score("", "gold") == 0.0
    assert cleaneval_score("pred", "") == 0.0


@settings(max_examples=300, deadline=None)
@given(words, words)
def test_cleaneval_eq4_equals_eq3(a, b):
    """Eq. 4 (LCS form) equals Eq. 3 computed from an insert/delete-only edit-distance DP."""
    if not a and not b:
        return
    d = dp_indel_distance(a, b)
    aligned = (len(a) + len(b) - d) // 2
    eq3 = 1 - d / (d + aligned)
    assert cleaneval_score(a, b) == pytest.approx(eq3)


# ------------------------------------------------------------------------------------------------
# Full-text baseline and gold loader
# ------------------------------------------------------------------------------------------------

PAGE = (
    "<html><head><title>Title</title><style>.x{color:red}</style></head><body>"
    "<nav>Home | About</nav><article><p>Main text of the article, with several words.</p></article>"
    "<script>var tracking = 1;</script><svg><title>icon</title></svg></body></html>"
)
GOLD = "Main text of the article, with several words."


def test_full_text_drops_script_style_svg():
    text = full_text(PAGE.encode())
    assert tokens(text) == ["Home", "About", *tokens(GOLD)]
    assert full_text(PAGE) == text
    assert full_text("") == ""


def write_scrapinghub(root: Path, pages: dict[str, tuple[str, str]]) -> None:
    (root / "html").mkdir(parents=True)
    truth = {}
    for pid, (html, text) in pages.items():
        (root / "html" / f"{pid}.html.gz").write_bytes(gzip.compress(html.encode()))
        truth[pid] = {"articleBody": text, "url": f"https://example.com/{pid}"}
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")


def test_load_gold_scrapinghub(tmp_path):
    write_scrapinghub(tmp_path, {"b2": (PAGE, GOLD), "a1": ("<p>x</p>", "x")})
    pages = load_gold(tmp_path)
    assert [p.id for p in pages] == ["a1", "b2"]
    assert pages[1].html == PAGE.encode() and pages[1].text == GOLD
    assert pages[1].url == "https://example.com/b2"
    assert load_gold(tmp_path / "ground-truth.json") == pages


def test_load_gold_pairs(tmp_path):
    write_pairs(tmp_path, {"one": (PAGE, GOLD)})
    (tmp_path / "two.html.gz").write_bytes(gzip.compress(b"<p>zwei</p>"))
    (tmp_path / "two.txt").write_text("zwei", encoding="utf-8")
    (tmp_path / "README.md").write_text("ignored")
    pages = load_gold(str(tmp_path))
    assert [(p.id, p.text, p.url) for p in pages] == [("one", GOLD, None), ("two", "zwei", None)]
    assert pages[1].html == b"<p>zwei</p>"


@pytest.mark.parametrize(
    "setup, match",
    [
        (lambda d: None, "neither"),  # empty directory
        (lambda d: (d / "a.html").write_text("<p>a</p>"), "without"),  # unpaired html
        (
            lambda d: write_pairs(d, {"a": ("<p>a</p>", "a")}) or (d / "b.txt").write_text("b"),
            r"1 file\(s\) .*: b$",
        ),
        (lambda d: (d / "ground-truth.json").write_text("{not json"), "cannot read"),
        (lambda d: (d / "ground-truth.json").write_text('{"x": {"articleBody": "t"}}'), "has no"),
        (lambda d: (d / "ground-truth.json").write_text('{"x": {"url": "u"}}'), "articleBody"),
    ],
)
def test_load_gold_errors(tmp_path, setup, match):
    setup(tmp_path)
    with pytest.raises(ValueError, match=match):
        load_gold(tmp_path)


def test_load_gold_missing_path(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_gold(tmp_path / "nope")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        load_gold(tmp_path / "f.txt")


# ------------------------------------------------------------------------------------------------
# evaluate / format_table, with a fake extractor library
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeExtraction:
    text: str
    method: str
    title: str | None = None
    scores: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None


FAKE_METHODS = ("fake-article", "fake-empty", "fake-error", "fake-crash")


def fake_extract(html, method="fake-article", *, url=None, content_type=None, **params):
    if method not in FAKE_METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(FAKE_METHODS)}")
    if method == "fake-crash":
        raise RuntimeError("boom")
    if method == "fake-error":
        return FakeExtraction("", method, status="error", error="parse failed")
    if method == "fake-empty":
        return FakeExtraction("", method, status="empty", error="no text extracted")
    from selectolax.lexbor import LexborHTMLParser

    node = LexborHTMLParser(html).css_first("article")
    text = node.text() if node is not None else ""
    return FakeExtraction(text, method, title="Title", scores={"density": 1.5})


@pytest.fixture
def fake_lib(monkeypatch):
    import contentx_udf

    monkeypatch.setattr(contentx_udf, "extract", fake_extract, raising=False)
    monkeypatch.setattr(contentx_udf, "METHODS", FAKE_METHODS, raising=False)
    return contentx_udf


def gold_pages() -> list[GoldPage]:
    other = PAGE.replace("Main text of the article", "Another article body text")
    return [
        GoldPage("p1", PAGE.encode(), GOLD, None),
        GoldPage("p2", other.encode(), "Another article body text, with several words.", None),
    ]


def test_evaluate_full_text_without_library():
    (res,) = evaluate(gold_pages(), ["full-text"])
    assert res.method == FULL_TEXT and res.n_pages == 2
    assert res.recall == 1.0 and 0 < res.precision < 1
    assert res.accuracy == 0.0 and res.n_empty == 0 and res.n_errors == 0
    assert 0 < res.lcs_f1 < 1 and 0 < res.cleaneval < 1
    assert res.ms_median >= 0 and res.ms_p95 >= res.ms_median
    assert res.f1_std is None


def test_evaluate_with_fake_library(fake_lib):
    results = evaluate(gold_pages(), "all", n_bootstrap=50)
    by = {r.method: r for r in results}
    assert list(by) == [FULL_TEXT, *FAKE_METHODS]
    art = by["fake-article"]
    assert (art.precision, art.recall, art.f1, art.accuracy) == (1.0, 1.0, 1.0, 1.0)
    assert (art.lcs_f1, art.cleaneval) == (1.0, 1.0)
    assert art.f1_std == 0.0
    assert (by["fake-empty"].n_empty, by["fake-empty"].n_errors, by["fake-empty"].f1) == (2, 0, 0.0)
    assert (by["fake-error"].n_empty, by["fake-error"].n_errors) == (0, 2)
    assert by["fake-error"].first_error == "p1: parse failed"
    assert by["fake-crash"].n_errors == 2 and "RuntimeError: boom" in by["fake-crash"].first_error
    (no_lcs,) = evaluate(gold_pages(), ["fake-article"], lcs=False)
    assert no_lcs.lcs_f1 is None and no_lcs.cleaneval is None and no_lcs.f1 == 1.0


def test_evaluate_unknown_method_lists_valid(fake_lib):
    with pytest.raises(ValueError, match="nope.*full-text, fake-article"):
        evaluate(gold_pages(), ["fake-article", "nope"])


def test_format_table_baseline_first(fake_lib):
    results = evaluate(gold_pages(), ["fake-article", "full-text"], lcs=False)
    lines = format_table(results).splitlines()
    assert lines[0].split()[:4] == ["method", "precision", "recall", "F1"]
    assert lines[2].startswith("full-text") and lines[3].startswith("fake-article")
    assert lines[3].split()[1:4] == ["1.000", "1.000", "1.000"]
    assert lines[3].split()[5:7] == ["-", "-"]  # LCS-F1 and CleanEval not computed
    assert lines[-1] == "(2 pages)"
    assert len({len(line) for line in lines[:4]}) == 1  # fixed width


# ------------------------------------------------------------------------------------------------
# WCXB: word metric, snippets, the layout
# ------------------------------------------------------------------------------------------------


def test_word_tokens_are_lowercased_words():
    assert word_tokens("Hello, World! It's 2024.") == ["hello", "world", "it", "s", "2024"]
    assert word_tokens("") == [] and word_tokens(None) == []


def test_word_scores_count_a_multiset_overlap():
    # overlap of {a: 2, b: 1} and {a: 1, b: 2} is {a: 1, b: 1}: 2 of 3 words either way
    s = word_scores("a a b", "a b b")
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3)
    s = word_scores("The cat. THE dog", "the cat sat")  # case-insensitive, punctuation dropped
    assert (s.precision, s.recall) == (pytest.approx(2 / 4), pytest.approx(2 / 3))
    assert s.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert word_scores("x y", "x y") == WordScore(1.0, 1.0, 1.0)
    assert word_scores("x", "y") == WordScore(0.0, 0.0, 0.0)


def test_word_scores_edge_cases_follow_the_benchmark():
    assert word_scores("", "") == WordScore(1.0, 1.0, 1.0)  # empty gold, empty extraction
    assert word_scores("...", None) == WordScore(1.0, 1.0, 1.0)  # no word token is empty
    assert word_scores("text", "") == WordScore(0.0, 0.0, 0.0)
    assert word_scores("", "gold text") == WordScore(0.0, 0.0, 0.0)


def test_snippet_rate_is_a_case_insensitive_substring_share():
    text = "The Council approved the budget.\nComments are closed."
    assert snippet_rate(text, ["council APPROVED", "the budget", "no such thing"]) == pytest.approx(2 / 3)
    assert snippet_rate(text, ["comments are closed"]) == 1.0
    assert snippet_rate("", ["x"]) == 0.0 and snippet_rate(None, ["x"]) == 0.0
    assert snippet_rate(text, []) == 1.0  # no snippets: 1.0, as upstream (for 'without' too)


def write_wcxb(root: Path) -> None:
    """Two WCXB pages: 0001 listed in metadata.json, 0002 not (type from the ground truth, 'category'
    counts as 'collection'; domain from the URL)."""
    (root / "ground-truth").mkdir(parents=True)
    (root / "html").mkdir()
    truth = {
        "0001": {
            "url": "https://blog.example.org/post",
            "_internal": {"page_type": {"primary": "article"}},
            "ground_truth": {"main_content": GOLD, "with": ["Main text"], "without": ["tracking"]},
        },
        "0002": {
            "url": "https://www.Shop.example.com/c/shoes",
            "_internal": {"page_type": {"primary": "category"}},
            "ground_truth": {"title": "Shoes", "with": [], "without": ["Cookie"]},  # no main_content
        },
    }
    for page_id, data in truth.items():
        (root / "ground-truth" / f"{page_id}.json").write_text(json.dumps(data), encoding="utf-8")
        (root / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(PAGE.encode()))
    meta = {"files": {"0001": {"split": "dev", "page_type": "article", "domain": "example.org"}}}
    (root / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")


def test_load_gold_wcxb(tmp_path):
    write_wcxb(tmp_path)
    first, second = load_gold(tmp_path)
    assert (first.id, first.text, first.url, first.html) == (
        "0001",
        GOLD,
        "https://blog.example.org/post",
        PAGE.encode(),
    )
    assert (first.page_type, first.domain) == ("article", "example.org")  # from metadata.json
    assert (first.with_snippets, first.without_snippets) == (("Main text",), ("tracking",))
    assert (second.page_type, second.domain) == ("collection", "shop.example.com")  # from the ground truth
    assert second.text == "" and second.with_snippets == () and second.without_snippets == ("Cookie",)


def test_load_gold_wcxb_missing_html(tmp_path):
    write_wcxb(tmp_path)
    (tmp_path / "html" / "0002.html.gz").unlink()
    with pytest.raises(ValueError, match="0002"):
        load_gold(tmp_path)


def test_other_layouts_have_no_wcxb_fields(tmp_path):
    write_pairs(tmp_path, {"one": (PAGE, GOLD)})
    (page,) = load_gold(tmp_path)
    assert (page.page_type, page.domain, page.with_snippets, page.without_snippets) == (None,) * 4


def test_evaluate_wcxb_reports_word_metric_snippets_and_page_types(tmp_path, fake_lib):
    write_wcxb(tmp_path)
    pages = load_gold(tmp_path)
    by = {r.method: r for r in evaluate(pages, ["full-text", "fake-article", "fake-empty"])}
    art = by["fake-article"]
    assert art.metric == "word" and art.lcs_f1 is None  # LCS is off for WCXB sets by default
    # page 0001: the <article> is the gold (F1 1); page 0002: empty gold, non-empty extraction (F1 0)
    assert (art.precision, art.recall, art.f1) == (0.5, 0.5, 0.5)
    assert art.with_rate == 1.0 and art.without_rate == 0.0  # 0002 has no 'with' snippet: 1.0
    assert art.f1_by_type == {"article": 1.0, "collection": 0.0}
    assert art.pages_by_type == {"article": 1, "collection": 1}
    empty = by["fake-empty"]
    assert (empty.f1, empty.n_empty, empty.n_errors) == (0.5, 2, 0)  # empty gold + empty extraction: 1
    assert empty.f1_by_type == {"article": 0.0, "collection": 1.0}
    # full text has "Main text" and not "tracking" (a script's) nor "Cookie"
    assert (by["full-text"].with_rate, by["full-text"].without_rate) == (1.0, 0.0)
    table = format_table(list(by.values()))
    lines = table.splitlines()
    assert lines[0].split() == ["method", "precision", "recall", "F1", "with", "without"] + [
        "ms",
        "med",
        "ms",
        "p95",
        "empty",
        "errors",
    ]
    assert lines[2].startswith("full-text") and lines[3].split()[1:6] == [
        "0.500",
        "0.500",
        "0.500",
        "1.000",
        "0.000",
    ]
    assert "word F1 per page type" in lines
    header = lines[lines.index("word F1 per page type") + 1]
    assert header.split() == ["method", "article", "(1)", "collection", "(1)"]
    assert lines[-1].split() == ["fake-empty", "0.000", "1.000"]


def test_score_runs_scores_collected_extractions(tmp_path):
    """The hook for cross-validation: extractions gathered elsewhere (e.g. per fold) are scored at once."""
    write_wcxb(tmp_path)
    pages = load_gold(tmp_path)
    runs = [PageRun(GOLD, None, 0.001), PageRun("", "boom", 0.002)]
    res = score_runs(pages, "combined", runs)
    assert (res.method, res.f1, res.n_errors, res.first_error) == ("combined", 1.0, 1, "0002: boom")
    with pytest.raises(ValueError, match="1 extractions for 2 pages"):
        score_runs(pages, "x", runs[:1])


def test_evaluate_accepts_an_extract_function(tmp_path):
    write_wcxb(tmp_path)
    pages = load_gold(tmp_path)
    calls = []

    def extract(html, method, *, url=None):
        calls.append((method, url))
        return FakeExtraction("Main text of the article", method)

    (res,) = evaluate(pages, ["cectd-ds"], extract=extract)
    assert [c[1] for c in calls] == [p.url for p in pages] and res.with_rate == 1.0


WCXB_DEV = SHARED / "data" / "wcxb-dev"


@pytest.mark.devset
def test_real_wcxb_dev_loads():
    pages = load_gold(shared_or_skip(WCXB_DEV))
    assert len(pages) == 1497 and len({p.id for p in pages}) == 1497
    assert {p.page_type for p in pages} == set(PAGE_TYPES)
    assert all(p.with_snippets is not None and p.without_snippets is not None and p.html for p in pages)
    # the domain is missing only where neither metadata.json nor the ground truth has a URL
    assert sorted(p.id for p in pages if not p.domain) == ["0551", "4129", "4281", "4314", "4547"]
    assert len({p.domain for p in pages}) > 500
    by_id = {p.id: p for p in pages}
    assert by_id["4802"].text == by_id["4893"].text == ""  # no main_content at all
    assert sum(1 for p in pages if p.text) == 1476  # 19 more have an empty one


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def page_file(tmp_path) -> Path:
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    return path


def test_cli_extract_full_text(page_file, capsys):
    assert cli.main(["extract", str(page_file), "--method", "full-text"]) == 0
    out = capsys.readouterr().out
    assert "Main text of the article" in out and "tracking" not in out


def test_cli_extract_gz_json(tmp_path, capsys):
    path = tmp_path / "page.html.gz"
    path.write_bytes(gzip.compress(PAGE.encode()))
    assert cli.main(["extract", str(path), "--method", "full-text", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) == {"method", "title", "text", "scores", "status", "error"}
    assert obj["status"] == "ok" and GOLD in obj["text"]


def test_cli_extract_fake_library(fake_lib, page_file, capsys):
    assert cli.main(["extract", str(page_file), "--method", "fake-article", "--url", "http://x/"]) == 0
    assert capsys.readouterr().out.strip() == GOLD
    assert cli.main(["extract", str(page_file), "--method", "fake-article", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj == {
        "method": "fake-article",
        "title": "Title",
        "text": GOLD,
        "scores": {"density": 1.5},
        "status": "ok",
        "error": None,
    }
    assert cli.main(["extract", str(page_file), "--method", "fake-error"]) == 1
    assert "parse failed" in capsys.readouterr().err
    assert cli.main(["extract", str(page_file), "--method", "fake-empty"]) == 0  # empty is no error
    captured = capsys.readouterr()
    assert captured.out == "" and "empty: no text extracted" in captured.err


def test_cli_extract_unknown_method(fake_lib, page_file, capsys):
    assert cli.main(["extract", str(page_file), "--method", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fake-article" in err and "Traceback" not in err


def test_cli_modes_of_combined(page_file, tmp_path, capsys):
    assert cli.main(["extract", str(page_file), "--mode", "precision", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["method"] == "combined" and obj["status"] == "ok" and "Main text of the article" in obj["text"]
    for args, message in (
        (["extract", str(page_file), "--mode", "fast"], "must be one of balanced, precision, recall"),
        (["extract", str(page_file), "--method", "cectd-ds", "--mode", "recall"], "applies to the combined"),
        (["evaluate", "--gold", str(tmp_path), "--modes", "precision,fast"], "unknown mode(s) fast"),
    ):
        assert cli.main(args) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
    gold = tmp_path / "gold"
    write_pairs(gold, {"a": (PAGE, GOLD), "b": (PAGE, GOLD)})
    args = ["evaluate", "--gold", str(gold), "--methods", "combined", "--modes", "recall,precision"]
    assert cli.main(args) == 0
    rows = [line.split()[0:2] for line in capsys.readouterr().out.splitlines()]
    assert ["combined", "precision"] in rows and ["combined", "recall"] in rows


def test_cli_extract_missing_file(tmp_path, capsys):
    assert cli.main(["extract", str(tmp_path / "missing.html"), "--method", "full-text"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("contentx extract: error: no such file") and err.count("\n") == 1


def test_cli_usage_errors(capsys):
    assert cli.main([]) == 2
    assert cli.main(["frobnicate"]) == 2
    assert cli.main(["evaluate"]) == 2  # --gold is required
    capsys.readouterr()


def test_every_command_says_its_own_name_and_what_it_requires(capsys, monkeypatch):
    """Usage lines and errors name ``contentx COMMAND`` (never a module or a job script), required
    options are shown as required, and ``contentx --help`` gives each command one line."""
    required = {
        "run": ["--input", "--output"],
        "corpus": ["--input", "--output"],
        "select": ["--from", "--output"],
        "evaluate": ["--gold"],
        "train": ["--gold", "--out"],
        "extract": ["FILE"],
        "train-quality": ["--positive", "--negative", "--output"],
        "export": ["--from", "--output", "--format"],
    }
    assert set(required) | {"jvm-archive"} == set(cli.command_parsers())  # (jvm-archive requires nothing)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps at the terminal's width
    for command, options in required.items():
        assert cli.main([command, "--help"]) == 0
        usage = capsys.readouterr().out.split("\n\n")[0]
        assert usage.startswith(f"usage: contentx {command} "), usage
        flat = " ".join(usage.split())
        for option in options:  # required: in the usage line, not in brackets
            assert f" {option} " in f"{flat} " and f"[{option} " not in flat, (command, option)
        assert cli.main([command]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"contentx {command}: error: the following arguments are required: ")
    assert cli.main(["--help"]) == 0
    listing = capsys.readouterr().out
    assert "contentx_udf" not in listing and "extract_warc" not in listing
    lines = listing.split("  COMMAND\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # every command, those added later too, and its help on one line (no continuation lines)
    assert [ln.split()[0] for ln in lines] == list(cli.command_parsers()), lines
    assert all(ln.startswith("    ") and ln[4] != " " and len(ln.split()) > 3 for ln in lines), lines


def test_cli_evaluate_full_text(tmp_path, capsys):
    gold = tmp_path / "gold"
    write_pairs(gold, {"a": (PAGE, GOLD), "b": (PAGE, GOLD)})
    out_json = tmp_path / "res.json"
    rc = cli.main(["evaluate", "--gold", str(gold), "--methods", "full-text", "--json", str(out_json)])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].startswith("full-text") and "(2 pages)" in out
    data = json.loads(out_json.read_text())
    assert data["n_pages"] == 2 and data["results"][0]["method"] == "full-text"
    assert data["results"][0]["recall"] == 1.0
    assert cli.main(["evaluate", "--gold", str(gold), "--methods", "full-text", "--limit", "1"]) == 0
    assert "(1 pages)" in capsys.readouterr().out


def test_cli_evaluate_adds_baseline(fake_lib, tmp_path, capsys):
    write_pairs(tmp_path, {"a": (PAGE, GOLD)})
    assert cli.main(["evaluate", "--gold", str(tmp_path), "--methods", "fake-article"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:4]
    assert [r.split()[0] for r in rows] == ["full-text", "fake-article"]


def test_cli_evaluate_user_errors(fake_lib, tmp_path, capsys):
    assert cli.main(["evaluate", "--gold", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("contentx evaluate: error:") and err.count("\n") == 1
    assert cli.main(["evaluate", "--gold", str(tmp_path)]) == 2  # empty dir: not a gold set
    assert "not a gold set" in capsys.readouterr().err
    write_pairs(tmp_path, {"a": (PAGE, GOLD)})
    assert cli.main(["evaluate", "--gold", str(tmp_path), "--methods", "nope,fake-article"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "fake-empty" in err and "Traceback" not in err
    assert cli.main(["evaluate", "--gold", str(tmp_path), "--limit", "0"]) == 2
    bad_out = str(tmp_path / "no" / "dir.json")
    assert cli.main(["evaluate", "--gold", str(tmp_path), "--methods", "full-text", "--json", bad_out]) == 2
    assert "no such directory" in capsys.readouterr().err
    capsys.readouterr()


def test_cli_run_delegates_unchanged(monkeypatch):
    seen = {}

    def fake_main(argv):
        seen["argv"] = argv
        return 3

    monkeypatch.setitem(sys.modules, "contentx_udf.spark.job", types.SimpleNamespace(main=fake_main))
    args = ["--input", "s3://in/*.warc.gz", "--output", "out", "--methods", "cetr,ccb", "-h"]
    assert cli.main(["run", *args]) == 3
    assert seen["argv"] == args


def test_python_dash_m(page_file):
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "contentx_udf", "extract", str(page_file), "--method", "full-text"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Main text of the article" in proc.stdout


# ------------------------------------------------------------------------------------------------
# Against the real extractor library
# ------------------------------------------------------------------------------------------------


def test_real_cli_extract_every_method(page_file, capsys):
    from contentx_udf import METHODS

    for method in METHODS:
        assert cli.main(["extract", str(page_file), "--method", method, "--json"]) == 0, method
        obj = json.loads(capsys.readouterr().out)
        # the page is short: the CCB family keeps none of it, which is "empty" (exit 0), not an error
        assert obj["method"] == method and obj["status"] in ("ok", "empty")
        assert (obj["status"] == "empty") == (obj["text"] == "") == (obj["error"] is not None)
        assert isinstance(obj["text"], str) and isinstance(obj["scores"], dict)


def test_real_cli_extract_default_method(page_file, capsys):
    from contentx_udf import DEFAULT_METHOD

    assert cli.main(["extract", str(page_file), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["method"] == DEFAULT_METHOD and obj["status"] == "ok"


def test_real_cli_unknown_method_lists_names(page_file, capsys):
    from contentx_udf import METHODS as methods

    assert cli.main(["extract", str(page_file), "--method", "no-such-method"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(m in err for m in methods)


def test_real_evaluate_all(tmp_path):
    from contentx_udf import METHODS

    results = evaluate(gold_pages(), "all")
    assert [r.method for r in results] == [FULL_TEXT, *METHODS]
    for r in results:
        assert 0.0 <= r.f1 <= 1.0
        assert r.n_errors == 0, (r.method, r.first_error)
