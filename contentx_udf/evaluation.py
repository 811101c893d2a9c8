"""Evaluation of main-text extractors against hand-labelled gold text (pure functions, no Spark).

Metrics:

* **Shingle P/R/F1 and accuracy** of the scrapinghub article-extraction-benchmark
  (``/work/shared/data/scrapinghub/README.md``, upstream ``evaluate.py``): word 4-gram multisets,
  per-page counts normalised so that every page weighs the same, per-page precision/recall averaged
  over pages, F1 = harmonic mean of the two averages.
* **LCS P/R/F1** on word sequences, CETD paper (Sun et al., SIGIR 2011) §5.2, Eq. 1–2.
* **CleanEval score**, CETD §5.2, Eq. 3–4 (insert/delete-only word edit distance, computed via LCS).

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
    """One page of a gold set: raw HTML bytes and the hand-labelled main text."""

    id: str
    html: bytes
    text: str
    url: str | None = None


def _read_maybe_gzip(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def load_gold(path: str | Path) -> list[GoldPage]:
    """Load a gold set, sorted by page id. Two layouts:

    * scrapinghub: ``ground-truth.json`` = ``{id: {"articleBody": str, "url": str}}`` and
      ``html/<id>.html.gz`` (the path may also point at ``ground-truth.json`` itself);
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
    return _load_pairs(p)


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

    precision/recall/f1/accuracy: shingle metric (README); ``*_std``: bootstrap std (None if not run);
    lcs_f1: mean per-page LCS F1 (CETD Eq. 2); cleaneval: mean per-page CleanEval score (CETD Eq. 4),
    both None when not computed; ms_median/ms_p95: time per page of one extraction call;
    n_empty: pages without a word token in the extraction (status ``empty``, or ``ok`` with only
    punctuation); n_errors: pages with status error (or an exception).
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

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def available_methods() -> tuple[str, ...]:
    """``full-text`` followed by the library's METHODS."""
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


def _run_one(page: GoldPage, method: str, extract: Any) -> tuple[str, bool, str | None, float]:
    """(text, ok, error, seconds) of one extraction; an exception counts as an error."""
    t0 = time.perf_counter()
    try:
        if method == FULL_TEXT:
            text, ok, err = full_text(page.html), True, None
        else:
            res = extract(page.html, method, url=page.url)
            ok = res.status != "error"  # "empty" is a scored empty text, not a failure
            text = (res.text or "") if ok else ""
            err = None if ok else (res.error or "error")
    except Exception as e:  # noqa: BLE001 - an extractor crash is a scored failure, not a stop
        text, ok, err = "", False, f"{type(e).__name__}: {e}"
    return text, ok, err, time.perf_counter() - t0


def evaluate(
    gold_pages: Sequence[GoldPage],
    methods: str | Iterable[str],
    *,
    lcs: bool = True,
    n_bootstrap: int = 0,
) -> list[MethodResult]:
    """Run each method once per page (timed) and score it against the gold text.

    ``methods``: names, a comma list or ``"all"`` (``full-text`` is the built-in baseline).
    ``lcs=False`` skips the LCS-F1 and CleanEval scores; ``n_bootstrap > 1`` adds bootstrap stds.
    """
    names = resolve_methods(methods)
    extract = None
    if any(m != FULL_TEXT for m in names):
        from contentx_udf import extract
    gold_tokens = [tokens(p.text) for p in gold_pages]
    results = []
    for method in names:
        scores: list[PageScore] = []
        lcs_f1s: list[float] = []
        ce: list[float] = []
        secs: list[float] = []
        n_empty = n_errors = 0
        first_error = None
        for page, gtoks in zip(gold_pages, gold_tokens, strict=True):
            text, ok, err, dt = _run_one(page, method, extract)
            secs.append(dt)
            if not ok:
                n_errors += 1
                first_error = first_error or f"{page.id}: {err}"
            ptoks = tokens(text)
            if ok and not ptoks:
                n_empty += 1
            scores.append(shingle_scores(ptoks, gtoks))
            if lcs:
                lcs_f1s.append(lcs_scores(ptoks, gtoks)[2])
                ce.append(cleaneval_score(ptoks, gtoks))
        agg = aggregate_shingles(scores)
        std = bootstrap_std(scores, n_bootstrap) if n_bootstrap > 1 else None
        ms = np.array(secs) * 1000.0 if secs else np.zeros(1)
        results.append(
            MethodResult(
                method=method,
                n_pages=len(gold_pages),
                precision=agg["precision"],
                recall=agg["recall"],
                f1=agg["f1"],
                accuracy=agg["accuracy"],
                lcs_f1=statistics.fmean(lcs_f1s) if lcs and lcs_f1s else None,
                cleaneval=statistics.fmean(ce) if lcs and ce else None,
                ms_median=float(np.median(ms)),
                ms_p95=float(np.percentile(ms, 95)),
                n_empty=n_empty,
                n_errors=n_errors,
                precision_std=std["precision"] if std else None,
                recall_std=std["recall"] if std else None,
                f1_std=std["f1"] if std else None,
                first_error=first_error,
            )
        )
    return results


def format_table(results: Sequence[MethodResult]) -> str:
    """Fixed-width text table, one row per method, the full-text baseline first."""
    ordered = sorted(results, key=lambda r: r.method != FULL_TEXT)  # stable: keeps the given order

    def num(x: float | None, std: float | None = None) -> str:
        if x is None:
            return "-"
        return f"{x:.3f}" if std is None else f"{x:.3f}±{std:.3f}"

    header = ["method", "precision", "recall", "F1", "accuracy", "LCS-F1", "CleanEval", "ms med", "ms p95"]
    header += ["empty", "errors"]
    rows = [
        [
            r.method,
            num(r.precision, r.precision_std),
            num(r.recall, r.recall_std),
            num(r.f1, r.f1_std),
            num(r.accuracy),
            num(r.lcs_f1),
            num(r.cleaneval),
            f"{r.ms_median:.2f}",
            f"{r.ms_p95:.2f}",
            str(r.n_empty),
            str(r.n_errors),
        ]
        for r in ordered
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    sep = "  ".join("-" * w for w in widths)
    n = results[0].n_pages if results else 0
    return "\n".join([line(header), sep, *(line(r) for r in rows), f"({n} pages)"]) + "\n"
