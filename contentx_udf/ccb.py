"""Content Code Blurring: CCB, ACCB and TCCB (T. Gottron, DEXA 2008).

The page source becomes a *content code vector* (§III-A): one entry per atomic element,
1.0 for content and 0.0 for code.  The vector is blurred repeatedly with a Gaussian
weighted local average (§III-B) — each entry becomes the *content code ratio* of its
neighbourhood — until the content that would be extracted stops changing (§III-C).  The
content elements whose ratio is above the threshold ``t`` form the main content.

* **CCB** — character based: every character of a tag is code, every other character is
  content.  Words are always extracted entirely (§III-C, "downstream refinements").
* **ACCB** — CCB with anchor tags ignored "entirely during the creation of the content
  code vector" (§III-C): the characters of ``<a ...>`` and ``</a>`` are left out of the
  vector, the anchor text stays content.
* **TCCB** — token based: every tag and every word is one token (as in BTE/DSC).

Parameters (§IV-A): threshold ``t = 0.75`` for all three; range 40 for CCB and ACCB, 25
for TCCB.  What the paper leaves open, and how it is read here:

* the Gaussian: the range is the radius of the neighbourhood, ``σ = range / 3``
  (``sigma_per_range``; 1/2 and 1 scored lower on the dev set), weights normalised;
* the borders: the average is taken over the part of the neighbourhood inside the vector;
* "words are always extracted entirely": a word is extracted when any of its characters
  is above ``t``; whitespace is always passed to the text, so that words stay apart;
* the stop rule: stop at the first blur after which the set of extracted words is the
  same as before (``stop_change_rate = 0``; the paper also speaks of "a low rate of
  changes", which ``stop_change_rate > 0`` allows).

Dev-set refinements (scrapinghub, shingle F1; the paper's value stays reachable):

===================================================  =====  =====  =====
setting                                               CCB    ACCB   TCCB
===================================================  =====  =====  =====
paper (whitespace and attributes in the vector,      0.778  0.807  0.836
t = 0.75, one entry per character)
whitespace and tag attributes left out of the        0.859  0.853
character vector (``whitespace_in_vector``,
``attributes_in_vector``): modern tags carry long
class lists, indentation inflates the content share
TCCB threshold 0.65                                                 0.889
blur on cells of 4 characters (``chars_per_cell``;   0.858  0.853
speed only: 2x faster, 98.5 % shingle agreement)
===================================================  =====  =====  =====

Either vector refinement alone is worse for one of CCB/ACCB (whitespace out: 0.756 /
0.814; attributes out: 0.803 / 0.786): they shift the content/code balance in opposite
directions.  TCCB at t = 0.6 / 0.7 scores 0.879 / 0.872.

Cost: one ``np.convolve`` per blur and a stop check per blur, a median of 19-20 blurs
(CCB/ACCB) and 14 (TCCB) per dev page; ``max_blur_work`` lowers the number of blurs on
huge pages (``iteration_cap`` in the scores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .document import Document, SourceArrays

if TYPE_CHECKING:
    from .core import MethodResult

#: Code points ``str.split()`` treats as whitespace (word separators of the output text).
_SPACE_CODES = np.array(
    [9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B)]
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.uint32,
)


# --- the blur (§III-B) ------------------------------------------------------------------


def gaussian_kernel(radius: int, sigma: float) -> np.ndarray:
    """Weights of the local average for offsets ``-radius..radius`` (§III-B).

    "We chose the weights according to a Gauss distribution": ``w(d) ∝ exp(-d² / 2σ²)``,
    normalised to sum 1 so that a neighbourhood of only content (1) or only code (0)
    keeps its value.  The *range* of §IV-A is the radius of the neighbourhood; the paper
    gives no σ (we use ``σ = sigma_per_range × range``).  ``sigma <= 0`` gives the
    identity (no blurring).
    """
    radius = max(int(radius), 0)
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    if sigma <= 0:
        weights = (offsets == 0).astype(np.float64)
    else:
        weights = np.exp(-0.5 * (offsets / sigma) ** 2)
    return weights / weights.sum()


def neighbourhood_weight(size: int, kernel: np.ndarray) -> np.ndarray:
    """Sum of the kernel weights that fall inside a vector of ``size`` entries, per entry.

    1 away from the borders; smaller within ``radius`` of either end, where part of the
    neighbourhood lies outside the document.
    """
    radius = len(kernel) // 2
    weight = np.ones(size, dtype=np.float64)
    edge = np.unique(np.concatenate((np.arange(min(radius, size)), np.arange(max(size - radius, 0), size))))
    if edge.size:
        cumulative = np.concatenate(([0.0], np.cumsum(kernel)))
        first = np.maximum(radius - edge, 0)  # first kernel index inside the vector
        last = np.minimum(radius + (size - 1 - edge), 2 * radius)  # last kernel index inside
        weight[edge] = cumulative[last + 1] - cumulative[first]
    return weight


def blur(values: np.ndarray, kernel: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """One blurring step: the Gaussian weighted local average of every entry (§III-B).

    Near the borders the average is taken over the part of the neighbourhood inside the
    vector (weights renormalised by ``weight``, see :func:`neighbourhood_weight`), so a
    uniform vector stays uniform.
    """
    size = len(values)
    if size == 0:
        return values.astype(np.float64)
    radius = len(kernel) // 2
    full = np.convolve(values, kernel)  # length size + 2 * radius
    if weight is None:
        weight = neighbourhood_weight(size, kernel)
    return full[radius : radius + size] / weight


@dataclass
class BlurOutcome:
    """Final content code ratios and how the iteration ended."""

    ratios: np.ndarray
    extracted: np.ndarray  # the stop criterion's view of the extraction (per word)
    iterations: int
    converged: bool


def blur_until_stable(
    content_code: np.ndarray,
    kernel: np.ndarray,
    extracted_by: Callable[[np.ndarray], np.ndarray],
    max_iter: int,
    stop_change_rate: float = 0.0,
    initial: np.ndarray | None = None,
) -> BlurOutcome:
    """Blur repeatedly until the extracted content stops changing (§III-C).

    ``extracted_by(ratios)`` tells which elements would be extracted given the current
    ratios (whole words above the threshold).  Iteration 0 is the unblurred vector; the
    loop stops at the first blur that leaves the extraction unchanged, or after
    ``max_iter`` blurs.  ``initial`` is the extraction before any blur when the caller
    knows it better than ``extracted_by`` (on a vector of cells, see :func:`cell_means`).
    """
    ratios = content_code.astype(np.float64)
    extracted = extracted_by(ratios) if initial is None else initial
    if ratios.size == 0:
        return BlurOutcome(ratios, extracted, 0, True)
    weight = neighbourhood_weight(ratios.size, kernel)
    for iteration in range(1, max_iter + 1):
        ratios = blur(ratios, kernel, weight)
        now = extracted_by(ratios)
        if np.count_nonzero(now != extracted) <= stop_change_rate * now.size:
            return BlurOutcome(ratios, now, iteration, True)
        extracted = now
    return BlurOutcome(ratios, extracted, max_iter, max_iter == 0)


# --- the source: characters, words, tokens -----------------------------------------------


@dataclass
class SourceWords:
    """Words of the source text: runs of non-space content characters.

    ``letters`` are the character positions of the words, in order; ``word_of_letter``
    gives each letter's word number and ``word_start`` the index in ``letters`` of each
    word's first letter (for ``np.logical_or.reduceat``).
    """

    letters: np.ndarray
    word_of_letter: np.ndarray
    word_start: np.ndarray
    is_space: np.ndarray  # per character: whitespace outside tags

    @property
    def count(self) -> int:
        return len(self.word_start)

    @property
    def word_end(self) -> np.ndarray:
        """Index in ``letters`` of each word's last letter."""
        return (
            np.append(self.word_start[1:], self.letters.size).astype(np.int64) - 1
            if self.count
            else self.word_start
        )

    def char_mask(self, word_selected: np.ndarray) -> np.ndarray:
        """Characters of the selected words plus all whitespace (which keeps words apart)."""
        mask = self.is_space.copy()
        if self.letters.size:
            mask[self.letters] = word_selected[self.word_of_letter]
        return mask


def source_words(src: SourceArrays, tags_break_words: bool) -> SourceWords:
    """Split the source text into words.

    A word ends at whitespace and at block-level tags; with ``tags_break_words`` every
    tag ends a word (the token view of BTE/TCCB), otherwise inline tags inside a word
    (``<b>W</b>ord``) are transparent, as they are in the rendered text.
    """
    text = ~src.is_tag
    is_space = text & np.isin(src.codes, _SPACE_CODES, kind="table")
    is_letter = text & ~is_space
    letters = np.flatnonzero(is_letter)
    if tags_break_words:
        breaks = ~is_letter
    else:
        block = src.tag_is_block
        breaks = is_space | _span_mask(src.size, src.tag_start[block], src.tag_end[block])
    word_key = np.cumsum(breaks, dtype=np.int32)[letters]
    # a new word starts at a letter whose predecessor letter is in another segment, or is
    # not adjacent in the source when tags break words
    new_word = np.ones(letters.size, dtype=bool)
    if letters.size > 1:
        new_word[1:] = word_key[1:] != word_key[:-1]
    word_start = np.flatnonzero(new_word)
    word_of_letter = np.cumsum(new_word) - 1
    return SourceWords(letters, word_of_letter, word_start, is_space)


def _span_mask(size: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per-character mask of the spans ``[starts[i], ends[i])``, sorted and disjoint (tag
    spans and parts of them): one ``np.repeat`` of alternating gap/span runs."""
    if starts.size == 0:
        return np.zeros(size, dtype=bool)
    gaps = starts - np.concatenate(([0], ends[:-1]))
    lengths = np.empty(2 * starts.size + 1, dtype=np.int64)
    lengths[0:-1:2] = gaps
    lengths[1::2] = ends - starts
    lengths[-1] = size - ends[-1]
    flags = np.zeros(lengths.size, dtype=bool)
    flags[1::2] = True
    return np.repeat(flags, lengths)


def anchor_tag_chars(src: SourceArrays) -> np.ndarray:
    """Per-character mask of the characters of ``<a ...>`` and ``</a>`` tags (ACCB)."""
    anchor = src.tag_mask(("a",))
    return _span_mask(src.size, src.tag_start[anchor], src.tag_end[anchor])


def attribute_chars(src: SourceArrays) -> np.ndarray:
    """Per-character mask of the attribute part of every tag (after the name, before ``>``)."""
    name_len = np.fromiter((len(n) for n in src.tag_name), dtype=np.int64, count=len(src.tag_name))
    starts = src.tag_start + 1 + src.tag_closing + name_len
    ends = np.maximum(src.tag_end - 1, starts)
    return _span_mask(src.size, starts, ends)


# --- the methods -------------------------------------------------------------------------


def content_code_vector(
    src: SourceArrays,
    *,
    ignore_anchors: bool = False,
    whitespace_in_vector: bool = True,
    attributes_in_vector: bool = True,
    is_space: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The character based content code vector (§III-A, §III-B) and the characters in it.

    Entry 0.0 for a character of a tag (code), 1.0 for any other character (content).
    ACCB leaves the anchor tags out "entirely" (§III-C).  ``whitespace_in_vector=False``
    and ``attributes_in_vector=False`` leave out whitespace and the attribute part of the
    tags too (dev-set refinements; the paper's vector keeps both).  Returns the vector and
    the per-character mask of the characters it is made of.  ``is_space`` (whitespace
    outside tags, per character) saves recomputing it.
    """
    in_vector = np.ones(src.size, dtype=bool)
    if ignore_anchors:
        in_vector &= ~anchor_tag_chars(src)
    if not whitespace_in_vector:
        if is_space is None:
            is_space = ~src.is_tag & np.isin(src.codes, _SPACE_CODES, kind="table")
        in_vector &= ~is_space
    if not attributes_in_vector:
        in_vector &= ~attribute_chars(src)
    return (~src.is_tag[in_vector]).astype(np.float64), in_vector


def token_content_code_vector(src: SourceArrays, words: SourceWords) -> tuple[np.ndarray, np.ndarray]:
    """The token based content code vector (§III-A): 0.0 per tag, 1.0 per word, in order.

    ``words`` must split at every tag (:func:`source_words` with ``tags_break_words``).
    Returns the vector and the vector position of each word.
    """
    word_pos = words.letters[words.word_start]  # first character of each word
    # both position lists are sorted: a word's place is its rank plus the tags before it
    word_entry = np.arange(word_pos.size) + np.searchsorted(src.tag_start, word_pos)
    vector = np.zeros(src.tag_start.size + word_pos.size, dtype=np.float64)
    vector[word_entry] = 1.0
    return vector, word_entry


def _kernel(params: dict[str, Any], cell: int = 1) -> np.ndarray:
    """The Gaussian of the parameters, on a grid of ``cell`` elements per entry."""
    radius = int(params["range"])
    return gaussian_kernel(int(round(radius / cell)), float(params["sigma_per_range"]) * radius / cell)


def cell_means(values: np.ndarray, cell: int) -> np.ndarray:
    """Mean of every ``cell`` consecutive entries (the last cell may be shorter)."""
    starts = np.arange(0, values.size, cell)
    if starts.size == 0:
        return values.astype(np.float64)
    counts = np.diff(np.append(starts, values.size))
    return np.add.reduceat(values, starts) / counts


@dataclass
class WordSpansOnCells:
    """Words located on a vector of cells, for :meth:`word_peaks`.

    Entry ``e`` of the character vector sits at ``u = (e + 0.5) / cell - 0.5`` in cell
    coordinates (cell ``j`` has its centre at ``u = j``).  Between cell centres the ratio is
    interpolated linearly, so the highest ratio over a word's span is at one of its two
    ends or at a cell centre inside it.
    """

    first: tuple[np.ndarray, np.ndarray, np.ndarray]  # interpolation at the first letter
    last: tuple[np.ndarray, np.ndarray, np.ndarray]  # and at the last letter
    inner: np.ndarray  # [start, end) of the centres inside each word, interleaved
    has_inner: np.ndarray

    @classmethod
    def build(
        cls, first_entry: np.ndarray, last_entry: np.ndarray, cell: int, cells: int
    ) -> WordSpansOnCells:
        u_first = (first_entry + 0.5) / cell - 0.5
        u_last = (last_entry + 0.5) / cell - 0.5
        start = np.clip(np.floor(u_first).astype(np.int64) + 1, 0, cells)
        end = np.clip(np.ceil(u_last).astype(np.int64), 0, cells)
        has_inner = start < end
        # non-decreasing indices (end of a word <= start of the next): reduceat stays O(cells)
        inner = np.empty(2 * start.size, dtype=np.int64)
        inner[0::2] = start
        inner[1::2] = np.maximum(end, start)
        return cls(_interpolation(u_first, cells), _interpolation(u_last, cells), inner, has_inner)

    def word_peaks(self, ratios: np.ndarray) -> np.ndarray:
        """Highest interpolated ratio over each word's span."""
        peak = np.maximum(_interpolate(ratios, self.first), _interpolate(ratios, self.last))
        if self.has_inner.any():
            # a trailing sentinel keeps every ``end`` a valid reduceat index
            inner = np.maximum.reduceat(np.append(ratios, -np.inf), self.inner)[0::2]
            peak = np.where(self.has_inner, np.maximum(peak, inner), peak)
        return peak


def _interpolation(u: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    top = max(cells - 1, 0)
    left = np.clip(np.floor(u).astype(np.int64), 0, top)
    return left, np.minimum(left + 1, top), np.clip(u - left, 0.0, 1.0)


def _interpolate(values: np.ndarray, at: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    left, right, weight = at
    return values[left] + weight * (values[right] - values[left])


#: Cost of checking one word after a blur, in multiply-adds (measured: about 16).
_WORD_CHECK_WORK = 16


def _iteration_cap(params: dict[str, Any], vector_length: int, kernel_length: int, words: int) -> int:
    """``max_iter``, lowered so that all blurs and stop checks of a page together stay
    within ``max_blur_work`` multiply-adds (at least one blur): bounds the time on huge
    pages without touching ordinary ones."""
    per_blur = max(vector_length * kernel_length + _WORD_CHECK_WORK * words, 1)
    return int(min(int(params["max_iter"]), max(int(params["max_blur_work"]) // per_blur, 1)))


def _run(
    params: dict[str, Any],
    content_code: np.ndarray,
    extracted_by: Callable[[np.ndarray], np.ndarray],
    words: int,
    cell: int = 1,
    initial: np.ndarray | None = None,
) -> tuple[BlurOutcome, dict[str, float]]:
    """Blur ``content_code`` until the extraction settles; the outcome and the method's scores."""
    kernel = _kernel(params, cell)
    cap = _iteration_cap(params, content_code.size, len(kernel), words)
    outcome = blur_until_stable(
        content_code, kernel, extracted_by, cap, float(params["stop_change_rate"]), initial
    )
    scores = {
        "range": float(params["range"]),
        "sigma": float(params["sigma_per_range"]) * float(params["range"]),
        "threshold": float(params["threshold"]),
        "iterations": float(outcome.iterations),
        "iteration_cap": float(cap),
        "converged": float(outcome.converged),
        "vector_length": float(content_code.size),
        "content_share": float(content_code.mean()) if content_code.size else 0.0,
        "words": float(words),
        "words_selected": float(np.count_nonzero(outcome.extracted)),
    }
    return outcome, scores


def character_ccb(
    doc: Document, params: dict[str, Any], ignore_anchors: bool
) -> tuple[str, dict[str, float]]:
    """Character based content code blurring (§III-A, §III-C); ACCB with ``ignore_anchors``."""
    src = doc.source
    words = source_words(src, tags_break_words=False)
    content_code, in_vector = content_code_vector(
        src,
        ignore_anchors=ignore_anchors,
        whitespace_in_vector=bool(params["whitespace_in_vector"]),
        attributes_in_vector=bool(params["attributes_in_vector"]),
        is_space=words.is_space,
    )
    # vector position of each letter (letters are content, so always in the vector)
    letter_entry = np.cumsum(in_vector, dtype=np.int32)[words.letters] - 1
    threshold = float(params["threshold"])
    cell = max(int(params["chars_per_cell"]), 1)
    if cell == 1:  # the paper: one entry per character

        def extracted_by(ratios: np.ndarray) -> np.ndarray:
            """Whole words (§III-C): a word is extracted entirely when one of its characters is above t."""
            if words.count == 0:
                return np.zeros(0, dtype=bool)
            return np.logical_or.reduceat(ratios[letter_entry] > threshold, words.word_start)

        outcome, scores = _run(params, content_code, extracted_by, words.count)
    else:  # blurred on cells of `cell` characters, ratios interpolated in between
        cells = cell_means(content_code, cell)
        spans = WordSpansOnCells.build(
            letter_entry[words.word_start], letter_entry[words.word_end], cell, cells.size
        )

        def extracted_by(ratios: np.ndarray) -> np.ndarray:
            """Whole words: a word is extracted entirely when its ratio exceeds t somewhere."""
            return spans.word_peaks(ratios) > threshold

        initial = np.full(words.count, 1.0 > threshold)  # unblurred, every letter is 1
        outcome, scores = _run(params, cells, extracted_by, words.count, cell, initial)
        scores["vector_length"] = float(content_code.size)
        scores["cells"] = float(cells.size)
    scores["chars_per_cell"] = float(cell)
    return src.text_of(words.char_mask(outcome.extracted)), scores


def token_ccb(doc: Document, params: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """Token based content code blurring (§III-A): tags and words are the atomic elements."""
    src = doc.source
    words = source_words(src, tags_break_words=True)
    content_code, word_entry = token_content_code_vector(src, words)
    threshold = float(params["threshold"])

    def extracted_by(ratios: np.ndarray) -> np.ndarray:
        """Word tokens whose content code ratio is above t (§III-C)."""
        return ratios[word_entry] > threshold

    outcome, scores = _run(params, content_code, extracted_by, words.count)
    return src.text_of(words.char_mask(outcome.extracted)), scores


def ccb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CCB: character based content code blurring (§III; range 40, t = 0.75, §IV-A)."""
    from .core import MethodResult

    return MethodResult(*character_ccb(doc, params, ignore_anchors=False))


def accb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """ACCB: CCB with the anchor tags left out of the content code vector (§III-C)."""
    from .core import MethodResult

    return MethodResult(*character_ccb(doc, params, ignore_anchors=True))


def tccb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """TCCB: token based content code blurring (§III-A; range 25, §IV-A)."""
    from .core import MethodResult

    return MethodResult(*token_ccb(doc, params))
