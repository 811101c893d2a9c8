r"""Evaluation of main-text extractors against hand-labelled gold text (pure functions, no Spark).

Metrics:

* **Shingle P/R/F1 and accuracy** of the scrapinghub article-extraction-benchmark
  (``/work/shared/data/scrapinghub/README.md``, upstream ``evaluate.py``): word 4-gram multisets,
  per-page counts normalised so that every page weighs the same, per-page precision/recall averaged
  over pages, F1 = harmonic mean of the two averages.
* **LCS P/R/F1** on word sequences, CETD paper (Sun et al., SIGIR 2011) §5.2, Eq. 1–2.
* **CleanEval score**, CETD §5.2, Eq. 3–4 (insert/delete-only word edit distance, computed via LCS).
* **Word P/R/F1 and snippet rates** of WCXB, the Web Content eXtraction Benchmark (Murrough Foley, 2026,
  CC-BY-4.0; ``/work/shared/data/wcxb-dev/README.md``, upstream ``evaluate.py``): per page, bag-of-words
  precision/recall/F1 over lowercased ``\w+`` tokens (multiset overlap); the corpus figure is the mean
  over pages; ``with``/``without`` rates are the mean share of a page's snippets found in the extraction
  (case-insensitive substring); F1 per page type too.

A gold set is scored with its own benchmark's metric: WCXB sets with the word metric, the others with
the shingle metric (plus LCS-F1 and CleanEval).

The pseudo-method ``full-text`` (all body text, ``<script>``/``<style>``/``<svg>`` dropped) is the do-nothing
baseline and is implemented here, so that it can always be evaluated, with or without the extractors.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .settings import PAGE_TYPES

FULL_TEXT = "full-text"
SHINGLE_N = 4

_TOKEN_RE = re.compile(r"\w+")


# --------------------------------------------------------------------------------------------------
# Tokens and shingles (scrapinghub README, "Metric")
# --------------------------------------------------------------------------------------------------


def tokens(text: str | None) -> list[str]:
    """Word tokens as in the benchmark: ``re.findall(r"\\w+", text)``, case-sensitive."""
    return _TOKEN_RE.findall(text or "")


def _token_list(text: str | Sequence[str] | None) -> list[str]:
    """The tokens of a text, or a list of tokens as it is (already tokenised)."""
    return tokens(text) if text is None or isinstance(text, str) else list(text)


def shingles(toks: Sequence[str], n: int = SHINGLE_N) -> Counter[tuple[str, ...]]:
    """Multiset of word ``n``-grams; a text with 1..n-1 tokens gives one shorter shingle, none gives none."""
    if not toks:
        return Counter()
    if len(toks) < n:
        return Counter([tuple(toks)])
    return Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


@dataclass(frozen=True)
class PageScore:
    """Shingle counts of one page, normalised by TP+FP+FN (all zero when both texts are empty).

    ``precision`` is ``None`` when TP+FP = 0 (empty prediction) and ``recall`` is ``None`` when
    TP+FN = 0 (empty gold): such pages are left out of that average (README, "Metric").
    ``exact`` tells whether the token lists are equal (for accuracy).
    """

    tp: float
    fp: float
    fn: float
    precision: float | None
    recall: float | None
    exact: bool = False


def shingle_scores(pred: str | Sequence[str] | None, gold: str | Sequence[str] | None) -> PageScore:
    """Per-page shingle TP/FP/FN (normalised) and precision/recall, scrapinghub README "Metric".

    Texts are tokenised with :func:`tokens` (token lists are taken as they are)."""
    pred_toks, gold_toks = _token_list(pred), _token_list(gold)
    p, g = shingles(pred_toks), shingles(gold_toks)
    tp = sum((p & g).values())
    fp = sum((p - g).values())
    fn = sum((g - p).values())
    total = tp + fp + fn
    norm = float(total) if total else 1.0
    return PageScore(
        tp=tp / norm,
        fp=fp / norm,
        fn=fn / norm,
        precision=tp / (tp + fp) if tp + fp else None,
        recall=tp / (tp + fn) if tp + fn else None,
        exact=pred_toks == gold_toks,
    )


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def aggregate_shingles(page_scores: Sequence[PageScore]) -> dict[str, float]:
    """Averages over pages (README "Metric"): precision over pages with TP+FP > 0, recall over pages
    with TP+FN > 0, F1 = harmonic mean of the two averages, accuracy = share of exact token matches.

    An average over no pages (e.g. every prediction empty) is reported as 0.0.
    """
    precs = [s.precision for s in page_scores if s.precision is not None]
    recs = [s.recall for s in page_scores if s.recall is not None]
    precision = statistics.fmean(precs) if precs else 0.0
    recall = statistics.fmean(recs) if recs else 0.0
    accuracy = sum(s.exact for s in page_scores) / len(page_scores) if page_scores else 0.0
    return {"precision": precision, "recall": recall, "f1": _f1(precision, recall), "accuracy": accuracy}


def bootstrap_std(page_scores: Sequence[PageScore], n: int = 1000, seed: int = 0) -> dict[str, float]:
    """Bootstrap standard deviation (``n`` resamples of pages) of precision, recall and F1.

    The README's ± values are such standard deviations (upstream ``evaluate.py`` prints 1.96 × std).
    """
    k = len(page_scores)
    if k == 0 or n <= 1:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    prec = np.array([s.precision if s.precision is not None else 0.0 for s in page_scores])
    has_p = np.array([s.precision is not None for s in page_scores], dtype=float)
    rec = np.array([s.recall if s.recall is not None else 0.0 for s in page_scores])
    has_r = np.array([s.recall is not None for s in page_scores], dtype=float)
    idx = np.random.default_rng(seed).integers(0, k, size=(n, k))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.nan_to_num(prec[idx].sum(axis=1) / has_p[idx].sum(axis=1))
        r = np.nan_to_num(rec[idx].sum(axis=1) / has_r[idx].sum(axis=1))
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return {"precision": float(p.std(ddof=1)), "recall": float(r.std(ddof=1)), "f1": float(f.std(ddof=1))}


# --------------------------------------------------------------------------------------------------
# Word P/R/F1 and snippets (WCXB README, "Metric"; upstream evaluate.py)
# --------------------------------------------------------------------------------------------------


def word_tokens(text: str | None) -> list[str]:
    r"""WCXB word tokens: ``re.findall(r"\w+", text.lower())``."""
    return _TOKEN_RE.findall(text.lower()) if text else []


@dataclass(frozen=True)
class WordScore:
    """Bag-of-words precision/recall/F1 of one page (WCXB metric)."""

    precision: float
    recall: float
    f1: float


def word_scores(pred: str | Sequence[str] | None, gold: str | Sequence[str] | None) -> WordScore:
    r"""Per-page bag-of-words P/R/F1 over lowercased ``\w+`` tokens, as WCXB's ``evaluate.py``.

    The overlap is the multiset intersection (a word counts as often as it occurs in both texts):
    P = overlap / |pred|, R = overlap / |gold|.  An empty gold scores (1, 1, 1) when the prediction is
    empty too and (0, 0, 0) otherwise; an empty prediction for a non-empty gold scores (0, 0, 0).
    """
    p = pred if isinstance(pred, list) else word_tokens(pred)  # (texts or their word_tokens)
    g = gold if isinstance(gold, list) else word_tokens(gold)
    if not g:
        return WordScore(1.0, 1.0, 1.0) if not p else WordScore(0.0, 0.0, 0.0)
    if not p:
        return WordScore(0.0, 0.0, 0.0)
    overlap = sum((Counter(p) & Counter(g)).values())
    precision, recall = overlap / len(p), overlap / len(g)
    return WordScore(precision, recall, _f1(precision, recall))


def snippet_rate(text: str | None, snippets: Sequence[str]) -> float:
    """Share of ``snippets`` found in ``text`` (case-insensitive substring); 1.0 without snippets.

    As WCXB's ``evaluate.py``, also for the ``without`` list (where lower is better): a page without
    ``without`` snippets counts 1.0 there, so every system's without-rate carries the same offset.
    """
    if not snippets:
        return 1.0
    lowered = (text or "").lower()
    return sum(1 for s in snippets if s.lower() in lowered) / len(snippets)


# --------------------------------------------------------------------------------------------------
# LCS and CleanEval (CETD paper §5.2)
# --------------------------------------------------------------------------------------------------


def _match_masks(seq: Sequence[Any], wanted: set[Any]) -> dict[Any, int]:
    """For each item of ``wanted`` found in ``seq``: the int whose bit i is set where ``seq[i] == item``.

    Built through a bytearray per item, not by OR-ing big ints (which would be quadratic).
    """
    positions: dict[Any, list[int]] = {}
    for i, item in enumerate(seq):
        if item in wanted:
            positions.setdefault(item, []).append(i)
    masks = {}
    for item, pos in positions.items():
        buf = bytearray((pos[-1] >> 3) + 1)
        for i in pos:
            buf[i >> 3] |= 1 << (i & 7)
        masks[item] = int.from_bytes(buf, "little")
    return masks


def lcs_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common subsequence of two sequences of hashable items.

    Bit-parallel algorithm (Allison & Dix 1986; Hyyrö 2004): the longer sequence is the bit vector,
    one pass over the shorter one, each step a handful of big-integer operations, so the cost is about
    ``len(short) * len(long) / 64`` machine-word operations. Common prefix and suffix are trimmed first.
    """
    # Trim common prefix/suffix: they are always part of an LCS.
    lo, hi_a, hi_b = 0, len(a), len(b)
    while lo < hi_a and lo < hi_b and a[lo] == b[lo]:
        lo += 1
    while hi_a > lo and hi_b > lo and a[hi_a - 1] == b[hi_b - 1]:
        hi_a -= 1
        hi_b -= 1
    common = lo + (len(a) - hi_a)
    a, b = a[lo:hi_a], b[lo:hi_b]
    if not a or not b:
        return common
    long_, short = (a, b) if len(a) >= len(b) else (b, a)
    masks = _match_masks(long_, set(short))
    m = len(long_)
    full = (1 << m) - 1
    v = full
    for item in short:
        match = masks.get(item)
        if match is None:
            continue
        u = v & match
        v = ((v + u) | (v - u)) & full
    return common + m - v.bit_count()


def lcs_scores(pred: str | Sequence[str], gold: str | Sequence[str]) -> tuple[float, float, float]:
    """Word-level LCS precision, recall, F1: CETD §5.2 Eq. 1–2, ``a`` = extraction, ``b`` = gold.

    P = |LCS(a,b)| / |a|, R = |LCS(a,b)| / |b|, F1 = 2PR/(P+R). Every word occurrence is distinct
    (sequence, not bag of words). Texts are tokenised with :func:`tokens`. Both empty gives (1, 1, 1);
    a ratio with an empty denominator otherwise counts as 0.
    """
    a, b = _token_list(pred), _token_list(gold)
    if not a and not b:
        return 1.0, 1.0, 1.0
    lcs = lcs_length(a, b)
    precision = lcs / len(a) if a else 0.0
    recall = lcs / len(b) if b else 0.0
    return precision, recall, _f1(precision, recall)


def cleaneval_score(pred: str | Sequence[str], gold: str | Sequence[str]) -> float:
    """CleanEval score, CETD §5.2 Eq. 3 computed as Eq. 4.

    Eq. 3: ``1 - distance(a, b) / alignmentLength(a, b)`` where ``distance`` is the word-level
    Levenshtein distance with insertions and removals only (no substitutions) and ``alignmentLength``
    the number of operations (insert, remove or align) of that alignment. With ``L = |LCS(a, b)|``,
    distance = |a| + |b| - 2L and alignmentLength = |a| + |b| - L, which gives Eq. 4:
    ``L / (|a| + |b| - L)``. Both texts empty scores 1.
    """
    a, b = _token_list(pred), _token_list(gold)
    if not a and not b:
        return 1.0
    lcs = lcs_length(a, b)
    return lcs / (len(a) + len(b) - lcs)


# --------------------------------------------------------------------------------------------------
# Full-text baseline
# --------------------------------------------------------------------------------------------------


def full_text(html: str | bytes) -> str:
    """All body text of a page (selectolax/lexbor) without ``<script>``, ``<style>``, ``<svg>``,
    one line per text node, blank lines dropped.

    Bytes are decoded as UTF-8 with replacement (the development set is UTF-8).
    """
    from selectolax.lexbor import LexborHTMLParser

    if isinstance(html, bytes):
        html = html.decode("utf-8", errors="replace")
    tree = LexborHTMLParser(html)
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    for node in root.css("script, style, svg"):
        node.decompose()
    lines = (line.strip() for line in root.text(separator="\n").splitlines())
    return "\n".join(line for line in lines if line)


# --------------------------------------------------------------------------------------------------
# Gold data
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldPage:
    """One page of a gold set: raw HTML bytes and the hand-labelled main text.

    The WCXB layout adds ``page_type`` (one of :data:`PAGE_TYPES`), ``domain`` (host without
    ``www.``) and the ``with`` / ``without`` snippet lists; they are None for the other layouts.
    """

    id: str
    html: bytes
    text: str
    url: str | None = None
    page_type: str | None = None
    domain: str | None = None
    with_snippets: tuple[str, ...] | None = None
    without_snippets: tuple[str, ...] | None = None


def is_wcxb(pages: Sequence[GoldPage]) -> bool:
    """Whether the pages come from a WCXB gold set (scored with the word metric)."""
    return bool(pages) and all(p.with_snippets is not None for p in pages)


def _read_maybe_gzip(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def load_gold(path: str | Path) -> list[GoldPage]:
    """Load a gold set, sorted by page id. Three layouts:

    * scrapinghub: ``ground-truth.json`` = ``{id: {"articleBody": str, "url": str}}`` and
      ``html/<id>.html.gz`` (the path may also point at ``ground-truth.json`` itself);
    * WCXB: ``ground-truth/<id>.json`` (``url``, ``_internal.page_type.primary``, ``ground_truth``
      with ``main_content``, ``with``, ``without``), ``html/<id>.html.gz`` and optionally
      ``metadata.json`` (``files: {id: {page_type, domain}}``), see :func:`_load_wcxb`;
    * plain: a directory of ``NAME.html`` (or ``NAME.html.gz``) and ``NAME.txt`` (UTF-8) pairs.

    Raises ValueError for anything else (missing path, no pairs, unpaired or missing files).
    """
    p = Path(path)
    if p.is_file() and p.name == "ground-truth.json":
        p = p.parent
    if not p.is_dir():
        raise ValueError(f"gold set not found or not a directory: {p}")
    gt = p / "ground-truth.json"
    if gt.is_file():
        return _load_scrapinghub(p, gt)
    if (p / "ground-truth").is_dir() and (p / "html").is_dir():
        return _load_wcxb(p)
    return _load_pairs(p)


def _page_type(name: str | None) -> str | None:
    """WCXB page type: ``category`` counts as ``collection`` (upstream ``get_page_type``)."""
    if not isinstance(name, str) or not name:
        return None
    return "collection" if name == "category" else name


def url_host(url: str | None) -> str | None:
    """The host of ``url`` without ``www.`` (None for none or a malformed URL)."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname if url else None
    except ValueError:
        return None
    return host[4:] if host and host.startswith("www.") else host


def _snippets(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError(f"{where}: expected a list of strings")
    return tuple(value)


def _load_wcxb(root: Path) -> list[GoldPage]:
    """The WCXB layout.  ``metadata.json`` gives page type and domain where it lists the file (the dev
    split's lists 1,358 of 1,497); otherwise the page type is ``_internal.page_type.primary`` of the
    ground truth (``article`` when absent, as upstream) and the domain the URL's host without ``www.``.
    Domains are lowercased; None where neither gives one (5 dev pages have no URL).  A ground truth
    without ``main_content`` has an empty gold text (upstream does the same: such a page scores 1
    only for an empty extraction)."""
    meta: dict[str, Any] = {}
    meta_path = root / "metadata.json"
    if meta_path.is_file():
        try:
            files = json.loads(meta_path.read_text(encoding="utf-8")).get("files")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as e:
            raise ValueError(f"cannot read {meta_path}: {e}") from e
        meta = files if isinstance(files, dict) else {}
    pages = []
    for gt_path in sorted((root / "ground-truth").glob("*.json")):
        page_id = gt_path.stem
        try:
            data = json.loads(gt_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"cannot read {gt_path}: {e}") from e
        truth = data.get("ground_truth") if isinstance(data, dict) else None
        if not isinstance(truth, dict):
            raise ValueError(f"{gt_path}: no 'ground_truth' object")
        text = truth.get("main_content") or ""
        if not isinstance(text, str):
            raise ValueError(f"{gt_path}: 'main_content' is not a string")
        html_path = root / "html" / f"{page_id}.html.gz"
        if not html_path.is_file():
            raise ValueError(f"{gt_path}: page {page_id!r} has no {html_path}")
        url = data.get("url") if isinstance(data.get("url"), str) else None
        entry = meta.get(page_id) if isinstance(meta.get(page_id), dict) else {}
        internal = data.get("_internal") or {}
        declared = internal.get("page_type") if isinstance(internal, dict) else None
        primary = declared.get("primary") if isinstance(declared, dict) else declared
        page_type = _page_type(entry.get("page_type")) or _page_type(primary) or "article"
        domain = entry.get("domain") if isinstance(entry.get("domain"), str) else url_host(url)
        pages.append(
            GoldPage(
                page_id,
                _read_maybe_gzip(html_path),
                text,
                url,
                page_type=page_type,
                domain=domain.lower() if domain else None,
                with_snippets=_snippets(truth.get("with"), f"{gt_path}: 'with'"),
                without_snippets=_snippets(truth.get("without"), f"{gt_path}: 'without'"),
            )
        )
    if not pages:
        raise ValueError(f"{root / 'ground-truth'}: no pages")
    return pages


def _load_scrapinghub(root: Path, gt: Path) -> list[GoldPage]:
    try:
        truth = json.loads(gt.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {gt}: {e}") from e
    if not isinstance(truth, dict):
        raise ValueError(f"{gt}: expected a JSON object {{id: {{articleBody, url}}}}")
    pages = []
    for page_id in sorted(truth):
        entry = truth[page_id]
        if not isinstance(entry, dict) or not isinstance(entry.get("articleBody"), str):
            raise ValueError(f"{gt}: entry {page_id!r} has no string 'articleBody'")
        html_path = root / "html" / f"{page_id}.html.gz"
        if not html_path.is_file():
            raise ValueError(f"{gt}: page {page_id!r} has no {html_path}")
        pages.append(GoldPage(page_id, _read_maybe_gzip(html_path), entry["articleBody"], entry.get("url")))
    if not pages:
        raise ValueError(f"{gt}: no pages")
    return pages


def _load_pairs(root: Path) -> list[GoldPage]:
    htmls: dict[str, Path] = {}
    texts: dict[str, Path] = {}
    for f in root.iterdir():
        if not f.is_file():
            continue
        if f.name.endswith(".html.gz"):
            htmls[f.name[: -len(".html.gz")]] = f
        elif f.suffix == ".html":
            htmls[f.stem] = f
        elif f.suffix == ".txt":
            texts[f.stem] = f
    if not htmls:
        raise ValueError(
            f"not a gold set: {root} has neither ground-truth.json nor NAME.html + NAME.txt pairs"
        )
    unpaired = sorted(set(htmls) ^ set(texts))
    if unpaired:
        shown = ", ".join(unpaired[:5]) + (" ..." if len(unpaired) > 5 else "")
        raise ValueError(f"gold set {root}: {len(unpaired)} file(s) without their .html/.txt pair: {shown}")
    pages = []
    for name in sorted(htmls):
        try:
            text = texts[name].read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{texts[name]} is not UTF-8: {e}") from e
        pages.append(GoldPage(name, _read_maybe_gzip(htmls[name]), text, None))
    return pages


# --------------------------------------------------------------------------------------------------
# Evaluation of methods
# --------------------------------------------------------------------------------------------------


@dataclass
class MethodResult:
    """Scores of one method over a gold set.

    ``metric`` names the set's own metric: ``"shingle"`` (scrapinghub and plain sets) or ``"word"``
    (WCXB).  precision/recall/f1: that metric (shingle: the README's averages, F1 of the averages;
    word: means over pages of the per-page figures); accuracy: share of pages whose token list equals
    the gold's; ``*_std``: bootstrap std (shingle only, None if not run); lcs_f1: mean per-page LCS F1
    (CETD Eq. 2); cleaneval: mean per-page CleanEval score (CETD Eq. 4), both None when not computed;
    with_rate/without_rate: mean share of WCXB snippets found; f1_by_type/pages_by_type: word F1 and
    page count per WCXB page type (None for other sets); ms_median/ms_p95: time per page of one
    extraction call; n_empty: pages without a word token in the extraction (status ``empty``, or ``ok``
    with only punctuation); n_errors: pages with status error (or an exception).
    """

    method: str
    n_pages: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    lcs_f1: float | None
    cleaneval: float | None
    ms_median: float
    ms_p95: float
    n_empty: int
    n_errors: int
    precision_std: float | None = None
    recall_std: float | None = None
    f1_std: float | None = None
    first_error: str | None = None
    metric: str = "shingle"
    with_rate: float | None = None
    without_rate: float | None = None
    f1_by_type: dict[str, float] | None = None
    pages_by_type: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def available_methods() -> tuple[str, ...]:
    """``full-text`` followed by the library's METHODS (a method registered there, e.g. a learned one,
    is evaluated like the others without a change here)."""
    from contentx_udf import METHODS

    return (FULL_TEXT, *METHODS)


def resolve_methods(methods: str | Iterable[str]) -> list[str]:
    """Validate method names (``"all"`` = full-text + every METHOD); ValueError lists the valid names."""
    names = [m.strip() for m in methods.split(",")] if isinstance(methods, str) else list(methods)
    names = [m for m in names if m]
    if not names:
        raise ValueError("no method given")
    if set(names) == {FULL_TEXT}:
        return [FULL_TEXT]  # works without the extractor library
    valid = available_methods()
    if names == ["all"]:
        return list(valid)
    unknown = [m for m in names if m not in valid]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; valid: {', '.join(valid)}, all")
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class PageRun:
    """One extraction of one gold page: the text (empty on failure), the error (None unless the
    extractor failed) and the wall time in seconds."""

    text: str
    error: str | None
    seconds: float


#: ``extract(html, method, url=...)`` returning an object with ``status``, ``text``, ``error``
#: (:func:`contentx_udf.extract` by default).
ExtractFn = Any


def run_method(
    pages: Sequence[GoldPage],
    method: str,
    extract: ExtractFn | None = None,
    params: dict[str, Any] | None = None,
) -> list[PageRun]:
    """Run ``method`` once per page (timed), with parameter overrides ``params`` (e.g. ``combined``'s
    ``mode``).  ``extract`` replaces :func:`contentx_udf.extract`, e.g. to evaluate a model trained
    on the other folds; ``full-text`` never uses it."""
    if extract is None and method != FULL_TEXT:
        from contentx_udf import extract
    return [_run_one(page, method, extract, params or {}) for page in pages]


def _run_one(page: GoldPage, method: str, extract: ExtractFn, params: dict[str, Any]) -> PageRun:
    t0 = time.perf_counter()
    try:
        if method == FULL_TEXT:
            text, err = full_text(page.html), None
        else:
            res = extract(page.html, method, url=page.url, **params)
            failed = res.status == "error"  # "empty" is a scored empty text, not a failure
            text = "" if failed else (res.text or "")
            err = (res.error or "error") if failed else None
    except Exception as e:  # noqa: BLE001 - an extractor crash is a scored failure, not a stop
        text, err = "", f"{type(e).__name__}: {e}"
    return PageRun(text, err, time.perf_counter() - t0)


def score_runs(
    pages: Sequence[GoldPage],
    method: str,
    runs: Sequence[PageRun],
    *,
    lcs: bool | None = None,
    n_bootstrap: int = 0,
) -> MethodResult:
    """Score the extractions ``runs`` (one per page, in order) of ``method`` against the gold pages,
    with the set's own metric (:func:`is_wcxb`: word metric, else shingles).  ``lcs`` (default: on
    for shingle sets, off for WCXB) adds LCS-F1 and CleanEval.  Runs collected in pieces (e.g. the
    folds of a cross-validation) are scored together here."""
    if len(runs) != len(pages):
        raise ValueError(f"{len(runs)} extractions for {len(pages)} pages")
    wcxb = is_wcxb(pages)
    if lcs is None:
        lcs = not wcxb
    n_empty = n_errors = n_exact = 0
    first_error = None
    shingle: list[PageScore] = []
    words: list[WordScore] = []
    with_rates: list[float] = []
    without_rates: list[float] = []
    by_type: dict[str, list[float]] = {}
    lcs_f1s: list[float] = []
    ce: list[float] = []
    for page, run in zip(pages, runs, strict=True):
        if run.error is not None:
            n_errors += 1
            first_error = first_error or f"{page.id}: {run.error}"
        if wcxb:
            ptoks, gtoks = word_tokens(run.text), word_tokens(page.text)
            ws = word_scores(ptoks, gtoks)
            words.append(ws)
            with_rates.append(snippet_rate(run.text, page.with_snippets or ()))
            without_rates.append(snippet_rate(run.text, page.without_snippets or ()))
            by_type.setdefault(page.page_type or "article", []).append(ws.f1)
        else:
            ptoks, gtoks = tokens(run.text), tokens(page.text)
            shingle.append(shingle_scores(ptoks, gtoks))
        if run.error is None and not ptoks:
            n_empty += 1
        n_exact += ptoks == gtoks
        if lcs:
            lcs_f1s.append(lcs_scores(ptoks, gtoks)[2])
            ce.append(cleaneval_score(ptoks, gtoks))
    ms = np.array([r.seconds for r in runs]) * 1000.0 if runs else np.zeros(1)
    result = MethodResult(
        method=method,
        n_pages=len(pages),
        precision=0.0,
        recall=0.0,
        f1=0.0,
        accuracy=n_exact / len(pages) if pages else 0.0,
        lcs_f1=statistics.fmean(lcs_f1s) if lcs and lcs_f1s else None,
        cleaneval=statistics.fmean(ce) if lcs and ce else None,
        ms_median=float(np.median(ms)),
        ms_p95=float(np.percentile(ms, 95)),
        n_empty=n_empty,
        n_errors=n_errors,
        first_error=first_error,
    )
    if wcxb:
        result.metric = "word"
        result.precision = statistics.fmean(w.precision for w in words)
        result.recall = statistics.fmean(w.recall for w in words)
        result.f1 = statistics.fmean(w.f1 for w in words)
        result.with_rate = statistics.fmean(with_rates)
        result.without_rate = statistics.fmean(without_rates)
        order = [t for t in PAGE_TYPES if t in by_type] + sorted(set(by_type) - set(PAGE_TYPES))
        result.f1_by_type = {t: statistics.fmean(by_type[t]) for t in order}
        result.pages_by_type = {t: len(by_type[t]) for t in order}
    else:
        agg = aggregate_shingles(shingle)
        result.precision, result.recall, result.f1 = agg["precision"], agg["recall"], agg["f1"]
        if n_bootstrap > 1:
            std = bootstrap_std(shingle, n_bootstrap)
            result.precision_std, result.recall_std, result.f1_std = (
                std["precision"],
                std["recall"],
                std["f1"],
            )
    return result


def evaluate(
    gold_pages: Sequence[GoldPage],
    methods: str | Iterable[str],
    *,
    lcs: bool | None = None,
    n_bootstrap: int = 0,
    extract: ExtractFn | None = None,
) -> list[MethodResult]:
    """Run each method once per page (timed) and score it against the gold text (:func:`score_runs`).

    ``methods``: names, a comma list or ``"all"`` (``full-text`` is the built-in baseline).
    ``lcs=False`` skips the LCS-F1 and CleanEval scores (default: computed for shingle sets only);
    ``n_bootstrap > 1`` adds bootstrap stds (shingle sets); ``extract`` replaces the library's.
    """
    names = resolve_methods(methods)
    return [
        score_runs(gold_pages, m, run_method(gold_pages, m, extract), lcs=lcs, n_bootstrap=n_bootstrap)
        for m in names
    ]


def _num(x: float | None, std: float | None = None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if std is None else f"{x:.3f}±{std:.3f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def format_table(results: Sequence[MethodResult]) -> str:
    """Fixed-width text table, one row per method, the full-text baseline first.  For a WCXB set:
    word P/R/F1 and snippet rates, then a second table of word F1 per page type."""
    ordered = sorted(results, key=lambda r: r.method != FULL_TEXT)  # stable: keeps the given order
    n = results[0].n_pages if results else 0

    def timing(r):
        return [f"{r.ms_median:.2f}", f"{r.ms_p95:.2f}", str(r.n_empty), str(r.n_errors)]

    if not any(r.metric == "word" for r in ordered):
        header = [
            "method",
            "precision",
            "recall",
            "F1",
            "accuracy",
            "LCS-F1",
            "CleanEval",
            "ms med",
            "ms p95",
        ]
        header += ["empty", "errors"]
        rows = [
            [
                r.method,
                _num(r.precision, r.precision_std),
                _num(r.recall, r.recall_std),
                _num(r.f1, r.f1_std),
                _num(r.accuracy),
                _num(r.lcs_f1),
                _num(r.cleaneval),
                *timing(r),
            ]
            for r in ordered
        ]
        return "\n".join([*_table(header, rows), f"({n} pages)"]) + "\n"
    header = ["method", "precision", "recall", "F1", "with", "without", "ms med", "ms p95", "empty", "errors"]
    rows = [
        [r.method, _num(r.precision), _num(r.recall), _num(r.f1), _num(r.with_rate), _num(r.without_rate)]
        + timing(r)
        for r in ordered
    ]
    counts: dict[str, int] = {}
    for r in ordered:
        for t, k in (r.pages_by_type or {}).items():
            counts.setdefault(t, k)
    types = [t for t in PAGE_TYPES if t in counts] + sorted(set(counts) - set(PAGE_TYPES))
    type_rows = [[r.method, *(_num((r.f1_by_type or {}).get(t)) for t in types)] for r in ordered]
    lines = _table(header, rows)
    lines.append(
        f"({n} pages; word metric of WCXB; with: share of must-have snippets found, higher is better;"
    )
    lines.append(" without: share of must-not-have snippets found, lower is better)")
    lines += ["", "word F1 per page type"]
    lines += _table(["method", *(f"{t} ({counts[t]})" for t in types)], type_rows)
    return "\n".join(lines) + "\n"
