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

How it is computed (the results are those of the per-character formulation above, up to
floating-point rounding in the last digit):

* the page is read as its *text* (the characters outside the tags, in order) and its tags:
  the words are runs of letters in the text, and the character vector is a sequence of
  runs — the content of each piece of text, the code of each tag — so nothing is built
  per character of the source;
* a blur is one BLAS matrix product (:class:`Blurs`), three times faster than
  ``np.convolve``, in single precision (float32: the product takes 40 % less time; the
  ratios agree with float64 to about 1e-6, and the output on the 181 dev pages is the
  same); blurs come in batches, and the stop rule is checked on a whole batch;
* the stop check does not evaluate every word after every blur: the ratio is above ``t``
  on a few intervals (:meth:`WordSpans.extracted`), and the words each interval touches
  are found by binary search.

A median of 19-20 blurs (CCB/ACCB) and 14 (TCCB) per dev page; ``max_blur_work`` lowers
the number of blurs on huge pages (``iteration_cap`` in the scores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..page.document import Document, SourceArrays
from ..page.source import SPACE_CODE_POINTS, clean_string
from .base import MethodResult

#: Whether a code point is whitespace (``str.split()``'s word separators); every code point
#: from ``_SPACE_LIMIT`` on reads the last entry.
_SPACE_LIMIT = max(SPACE_CODE_POINTS) + 1
_IS_SPACE = np.zeros(_SPACE_LIMIT + 1, dtype=bool)
_IS_SPACE[list(SPACE_CODE_POINTS)] = True


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
    # an entry near both borders appears twice: it gets the same weight twice
    edge = np.concatenate((np.arange(min(radius, size)), np.arange(max(size - radius, 0), size)))
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
    uniform vector stays uniform.  (:class:`Blurs` computes the same, faster.)
    """
    size = len(values)
    if size == 0:
        return values.astype(np.float64)
    radius = len(kernel) // 2
    full = np.convolve(values, kernel)  # length size + 2 * radius
    if weight is None:
        weight = neighbourhood_weight(size, kernel)
    return full[radius : radius + size] / weight


#: Entries per block of :class:`Blurs` at least (and at least the kernel's radius).
_BLOCK = 12
#: Multiply-adds per matrix product at most: OpenBLAS runs larger products on several threads.
_MAX_PRODUCT = 1 << 18
#: Entries of the vector times blurs per batch at most (memory on huge pages).
_MAX_BATCH_ENTRIES = 1 << 22
_BAND_MATRICES: dict[tuple[bytes, int], np.ndarray] = {}


def _band_matrix(kernel: np.ndarray, block: int) -> np.ndarray:
    """``M`` (``3·block × block``, float32) with ``[previous, this, next block] @ M`` = this block blurred."""
    key = (kernel.tobytes(), block)
    matrix = _BAND_MATRICES.get(key)
    if matrix is None:
        radius = len(kernel) // 2
        matrix = np.zeros((3 * block, block), dtype=np.float32)
        column = np.arange(block)
        for offset in range(-radius, radius + 1):
            matrix[block + column + offset, column] = kernel[radius + offset]
        if len(_BAND_MATRICES) >= 32:
            _BAND_MATRICES.clear()
        _BAND_MATRICES[key] = matrix
    return matrix


_BORDER_SCALES: dict[tuple[bytes, int], tuple[np.ndarray, np.ndarray]] = {}


def _border_scales(kernel: np.ndarray, tail: int) -> tuple[np.ndarray, np.ndarray]:
    """Factors (float32) for the first ``radius`` entries of a blurred vector and for its last
    ``tail`` entries in its blocks (``radius`` entries of the vector, then zeros for the rest of
    the last block): the inverse :func:`neighbourhood_weight` of a vector of
    ``2 * radius`` entries, which has the same border weights (cached)."""
    key = (kernel.tobytes(), tail)
    scales = _BORDER_SCALES.get(key)
    if scales is None:
        radius = len(kernel) // 2
        weight = neighbourhood_weight(2 * radius, kernel)
        tail_scale = np.zeros(tail, dtype=np.float32)
        tail_scale[:radius] = 1.0 / weight[radius:]
        scales = ((1.0 / weight[:radius]).astype(np.float32), tail_scale)
        if len(_BORDER_SCALES) >= 256:
            _BORDER_SCALES.clear()
        _BORDER_SCALES[key] = scales
    return scales


class Blurs:
    """The successive blurs of a vector (:func:`blur` applied again and again), a batch at a time.

    A blur is one matrix product: the vector, cut into blocks of ``block >= radius``
    entries, each block side by side with its two neighbours (a strided view, copied once),
    times a banded matrix (:func:`_band_matrix`); then the entries within ``radius`` of a
    border are divided by their :func:`neighbourhood_weight`.  The rows of a batch are kept
    in one buffer with a zero block before and after each (the vector is zero outside).
    Vectors shorter than twice the radius go through :func:`blur`.  The batch is computed in
    float32 (the single-precision product is some 40 % faster; the ratios stay within about
    1e-6 of :func:`blur`'s).
    """

    def __init__(self, values: np.ndarray, kernel: np.ndarray, most: int) -> None:
        self.size = size = values.size
        self.kernel = kernel
        self.radius = radius = len(kernel) // 2
        self.most = most = max(1, min(most, _MAX_BATCH_ENTRIES // max(size, 1)))
        self.banded = radius > 0 and size >= 2 * radius
        if not self.banded:
            self.weight = neighbourhood_weight(size, kernel)
            self.last = values.astype(np.float64)
            return
        self.block = block = -(-max(_BLOCK, radius) // 4) * 4
        self.blocks = blocks = -(-size // block)
        length = (blocks + 2) * block
        self.rows = rows = np.empty((most + 1, length), dtype=np.float32)
        rows[:, :block] = 0.0  # the vector is zero outside
        rows[:, block + size :] = 0.0
        rows[0, block : block + size] = values
        self.windows = np.ndarray(
            (most + 1, blocks, 3 * block), dtype=np.float32, buffer=rows, strides=(length * 4, block * 4, 4)
        )
        self.blurred = rows[:, block : block + blocks * block].reshape(most + 1, blocks, block)
        self.scratch = np.empty((blocks, 3 * block), dtype=np.float32)
        self.matrix = _band_matrix(kernel, block)
        self.step = max(1, _MAX_PRODUCT // (3 * block * block))  # blocks per matrix product
        # the first and the last `radius` entries are divided by their weight (a vector of
        # 2 * radius entries has the same border weights); the blocks' tail past the vector
        # is set back to zero
        self.head = rows[:, block : block + radius]
        self.tail = rows[:, block + size - radius : block + blocks * block]
        self.head_scale, self.tail_scale = _border_scales(kernel, self.tail.shape[1])
        self.used = 0

    def next(self, count: int) -> np.ndarray:
        """The next ``min(count, most)`` blurs, one per row (valid until the next call)."""
        count = max(1, min(count, self.most))
        if not self.banded:
            out = np.empty((count, self.size))
            previous = self.last
            for row in range(count):
                previous = out[row] = blur(previous, self.kernel, self.weight)
            self.last = out[-1]
            return out
        rows, scratch, matrix, step, blocks = self.rows, self.scratch, self.matrix, self.step, self.blocks
        if self.used:
            rows[0] = rows[self.used]
        for row in range(1, count + 1):
            np.copyto(scratch, self.windows[row - 1])
            out = self.blurred[row]
            if step >= blocks:
                np.matmul(scratch, matrix, out=out)
            else:
                for lo in range(0, blocks, step):
                    np.matmul(scratch[lo : lo + step], matrix, out=out[lo : lo + step])
            head, tail = self.head[row], self.tail[row]
            np.multiply(head, self.head_scale, out=head)
            np.multiply(tail, self.tail_scale, out=tail)
        self.used = count
        return rows[1 : count + 1, self.block : self.block + self.size]


@dataclass
class BlurOutcome:
    """Final content code ratios and how the iteration ended."""

    ratios: np.ndarray
    extracted: np.ndarray  # the stop criterion's view of the extraction (per word)
    iterations: int
    converged: bool


#: Blurs per batch: the first batch, then the last again and again.  The stop rule is
#: checked on a batch at once (some 20 numpy calls, whatever its size); blurs past the stop
#: are wasted.  A dev page stops after 19 blurs (median; 9 to 40 from the 10th to the 90th
#: percentile): (16, 8) took the least time of the schedules tried.
_BATCHES = (16, 8)


def _first_stable(before: np.ndarray, now: np.ndarray, tolerance: float) -> int:
    """The first row of ``now`` that differs from the row before it (``before`` for the first)
    in at most ``tolerance`` elements, or -1."""
    if tolerance < 1:  # no change allowed: rows compared as bytes (a reduction along the rows
        # of a small 2-D array takes numpy longer than a Python loop over them)
        previous = before.tobytes()
        for row in range(len(now)):
            current = now[row].tobytes()
            if current == previous:
                return row
            previous = current
        return -1
    changes = np.count_nonzero(now != np.concatenate((before[None, :], now[:-1])), axis=1)
    stable = np.flatnonzero(changes <= tolerance)
    return int(stable[0]) if stable.size else -1


def blur_until_stable(
    content_code: np.ndarray,
    kernel: np.ndarray,
    extracted_by: Callable[[np.ndarray], np.ndarray],
    max_iter: int,
    stop_change_rate: float = 0.0,
    initial: np.ndarray | None = None,
) -> BlurOutcome:
    """Blur repeatedly until the extracted content stops changing (§III-C).

    ``extracted_by(ratios)`` gets blurred vectors, one per row of a 2-D array, and tells
    per row which elements would be extracted (whole words above the threshold).
    Iteration 0 is the unblurred vector; the loop stops at the first blur that leaves the
    extraction unchanged, or after ``max_iter`` blurs.  ``initial`` is the extraction
    before any blur when the caller knows it better than ``extracted_by``.
    """
    ratios = np.asarray(content_code, dtype=np.float64)
    extracted = extracted_by(ratios[None, :])[0] if initial is None else initial
    if ratios.size == 0 or max_iter <= 0:
        return BlurOutcome(ratios, extracted, 0, True)
    tolerance = stop_change_rate * extracted.size
    blurs = Blurs(ratios, kernel, max(_BATCHES))
    done = 0
    while done < max_iter:
        wanted = (_BATCHES[0] if done == 0 else _BATCHES[-1]) if extracted.size else 1
        rows = blurs.next(min(wanted, max_iter - done))
        now = extracted_by(rows)
        row = _first_stable(extracted, now, tolerance)
        if row >= 0:
            return BlurOutcome(rows[row].copy(), now[row], done + row + 1, True)
        extracted = now[-1]
        ratios = rows[-1]
        done += len(rows)
    return BlurOutcome(ratios.copy(), extracted, max_iter, False)


def _at_most(threshold: float, dtype: np.dtype) -> np.generic:
    """The largest value of ``dtype`` not above ``threshold``: a value of ``dtype`` is above it
    exactly when it is above ``threshold``."""
    edge = np.asarray(threshold, dtype=dtype)[()]
    return np.nextafter(edge, dtype.type(-np.inf)) if float(edge) > threshold else edge


@dataclass
class WordSpans:
    """Words as closed spans ``[first, last]`` of a blurred vector (entry coordinates).

    Between entries the ratio is interpolated linearly, and constant beyond the first and
    the last entry.  A word is extracted when its ratio is above the threshold somewhere on
    its span ("words are always extracted entirely").  Spans are sorted and disjoint.
    """

    first: np.ndarray
    last: np.ndarray

    @classmethod
    def on_cells(cls, first_entry: np.ndarray, last_entry: np.ndarray, cell: int) -> WordSpans:
        """Spans of words on a vector of cells of ``cell`` entries: entry ``e`` lies at
        ``(e + 0.5) / cell - 0.5`` (cell ``j`` has its centre at ``j``).  Spans start after
        -0.5 and end before the number of cells less 0.5."""
        return cls((first_entry + 0.5) / cell - 0.5, (last_entry + 0.5) / cell - 0.5)

    @property
    def count(self) -> int:
        return len(self.first)

    def extracted(self, ratios: np.ndarray, threshold: float) -> np.ndarray:
        """Per row of ``ratios`` (one blurred vector per row), the words extracted.

        The interpolated ratio is above ``threshold`` on a few open intervals, from where it
        crosses the threshold upwards to where it crosses it downwards; the words an
        interval touches are a range of word numbers, found by binary search.
        """
        rows, size = ratios.shape
        words = self.count
        if size == 0 or words == 0:
            return np.zeros((rows, words), dtype=bool)
        # the rows one after the other, each with the threshold itself before and after it: a
        # row starts and ends below the threshold and crosses it alternately up and down
        # (in the ratios' precision: the threshold as the largest value not above it, which
        # is above the threshold exactly when it is above that value; a border
        # crossing lands within a rounding error of where it would with the threshold itself)
        width = size + 2
        edge = _at_most(threshold, ratios.dtype)
        padded = np.empty((rows, width), dtype=ratios.dtype)
        padded[:, 1:-1] = ratios
        padded[:, 0 :: width - 1] = edge
        values = padded.reshape(-1)
        above = values > edge
        at = np.flatnonzero(above[1:] != above[:-1])  # crossings between `at` and `at + 1`
        low = values[at].astype(np.float64)
        crossing = at + (threshold - low) / (values[at + 1] - low)
        # an interval's words: from the first whose span ends after its start, up to the
        # last whose span starts before its end; both ends lie on the same row, whose
        # place on the vector is `crossing - shift` (exact: an integer off a larger float)
        row = at[0::2] // width
        shift = row * width + 1
        lo = self.last.searchsorted(crossing[0::2] - shift, side="right")
        hi = self.first.searchsorted(crossing[1::2] - shift, side="left")
        # word numbers of the rows one after the other
        lo += row * words
        hi += row * words
        # the words of an interval are the range lo:hi; both ascend: merge the ranges that
        # overlap or touch, leave out the empty ones, and lay the runs out with np.repeat
        keep = (hi > lo).nonzero()[0]
        if keep.size == 0:
            return np.zeros((rows, words), dtype=bool)
        lo, hi = lo[keep], hi[keep]
        apart = (lo[1:] > hi[:-1]).nonzero()[0]
        bounds = np.empty(2 * apart.size + 4, dtype=np.int64)  # 0, start, end, start, ..., end, size
        bounds[0] = 0
        bounds[1] = lo[0]
        bounds[3:-2:2] = lo[1:][apart]
        bounds[2:-3:2] = hi[:-1][apart]
        bounds[-2] = hi[-1]
        bounds[-1] = rows * words
        flags = np.zeros(bounds.size - 1, dtype=bool)
        flags[1::2] = True
        return flags.repeat(np.diff(bounds)).reshape(rows, words)


# --- the source: text, words, tokens -----------------------------------------------------


@dataclass
class PageText:
    """The *text* of a page's source: its characters outside the tags, in order.

    ``tag_pos[i]`` is the number of text characters before tag ``i`` (a tag sits between
    text characters ``tag_pos[i] - 1`` and ``tag_pos[i]``); ``letters_before[p]`` the
    number of letters (non-whitespace characters) before text position ``p`` (one entry
    more than characters).
    """

    is_letter: np.ndarray
    letters_before: np.ndarray
    tag_pos: np.ndarray

    @classmethod
    def of(cls, src: SourceArrays) -> PageText:
        codes = src.text_codes
        is_letter = ~_IS_SPACE[np.minimum(codes, _SPACE_LIMIT)]
        letters_before = np.zeros(codes.size + 1, dtype=np.int64)
        np.cumsum(is_letter, out=letters_before[1:])
        return cls(is_letter, letters_before, src.text_offset[1:])

    @property
    def size(self) -> int:
        return self.is_letter.size

    def tags_before(self, pos: np.ndarray) -> np.ndarray:
        """Tags before each text position (the tags between the previous character and it included)."""
        return np.searchsorted(self.tag_pos, pos, side="right")


@dataclass
class TextWords:
    """Words of a page: runs of letters of its text.

    ``first``/``last`` are the text positions of each word's first and last letter,
    ``rank`` the number of letters before the word (a word's letters are consecutive in the
    text), ``tags_first``/``tags_last`` the tags before its first and last letter.
    """

    first: np.ndarray
    last: np.ndarray
    rank: np.ndarray
    tags_first: np.ndarray
    tags_last: np.ndarray

    @property
    def count(self) -> int:
        return len(self.first)

    @property
    def length(self) -> np.ndarray:
        return self.last - self.first + 1


def text_words(src: SourceArrays, tags_break_words: bool, text: PageText | None = None) -> TextWords:
    """Split the text of the source into words.

    A word ends at whitespace and at block-level tags; with ``tags_break_words`` every
    tag ends a word (the token view of BTE/TCCB), otherwise inline tags inside a word
    (``<b>W</b>ord``) are transparent, as they are in the rendered text.
    """
    text = PageText.of(src) if text is None else text
    letter = text.is_letter
    size = letter.size
    cut = np.zeros(size + 1, dtype=bool)  # a word may not go on across text position i
    cut[text.tag_pos if tags_break_words else text.tag_pos[src.tag_is_block]] = True
    start = letter.copy()
    start[1:] &= ~letter[:-1] | cut[1:size]
    end = letter.copy()
    end[:-1] &= ~letter[1:] | cut[1:size]
    first = np.flatnonzero(start)
    last = np.flatnonzero(end)
    rank = text.letters_before[first]
    tags_first = text.tags_before(first)
    # every tag ends a word: no tag inside one
    tags_last = tags_first if tags_break_words else text.tags_before(last)
    return TextWords(first, last, rank, tags_first, tags_last)


def _memo(src: SourceArrays) -> dict[Any, Any]:
    """Statistics of the source shared by CCB, ACCB and TCCB (``extract_all`` runs them on one page)."""
    return src.memo.setdefault("ccb", {})


def _page_text(src: SourceArrays) -> PageText:
    memo = _memo(src)
    if "text" not in memo:
        memo["text"] = PageText.of(src)
    return memo["text"]


def _name_lengths(src: SourceArrays) -> np.ndarray:
    """The length of each tag's name (it starts after ``<`` or ``</``)."""
    memo = _memo(src)
    if "name_len" not in memo:
        memo["name_len"] = src.tag_name_end - src.tag_start - 1 - src.tag_closing
    return memo["name_len"]


def _anchors(src: SourceArrays) -> np.ndarray:
    """Whether each tag is an anchor (``a`` or ``A``)."""
    one_letter = np.flatnonzero(_name_lengths(src) == 1)
    anchor = np.zeros(src.tag_start.size, dtype=bool)
    anchor[one_letter] = (src.codes[src.tag_start[one_letter] + 1 + src.tag_closing[one_letter]] | 32) == ord(
        "a"
    )
    return anchor


def _text_words(src: SourceArrays, tags_break_words: bool) -> TextWords:
    memo = _memo(src)
    key = ("words", tags_break_words)
    if key not in memo:
        memo[key] = text_words(src, tags_break_words, _page_text(src))
    return memo[key]


@dataclass
class CharacterVector:
    """The character based content code vector (§III-A, §III-B) as runs.

    ``runs`` are the lengths of: the content of the text before tag 0, the code of tag 0,
    the content of the text before tag 1, ... the content of the text after the last tag.
    ``code_before[i]`` is the code of the tags before tag ``i`` (one entry more).
    """

    runs: np.ndarray
    code_before: np.ndarray
    whitespace_in_vector: bool

    @property
    def size(self) -> int:
        return int(self.runs.sum())

    def values(self) -> np.ndarray:
        """The vector itself: 1.0 per content character, 0.0 per code character."""
        pattern = np.zeros(self.runs.size)
        pattern[0::2] = 1.0
        return np.repeat(pattern, self.runs)

    def entry(self, pos: np.ndarray, rank: np.ndarray, tags_before: np.ndarray) -> np.ndarray:
        """Vector entry of the letters at text positions ``pos`` (``rank`` letters before
        each, ``tags_before`` tags)."""
        return (pos if self.whitespace_in_vector else rank) + self.code_before[tags_before]

    def cell_means(self, cell: int) -> np.ndarray:
        """Mean of every ``cell`` consecutive entries (the last cell may be shorter)."""
        size = self.size
        cells = -(-size // cell)
        pattern = np.zeros(self.runs.size, dtype=np.uint8)
        pattern[0::2] = 1
        entries = np.zeros(cells * cell, dtype=np.uint8)  # the vector, zeros after its end
        entries[:size] = np.repeat(pattern, self.runs)
        lengths = np.full(cells, float(cell))
        lengths[-1:] = size - cell * (cells - 1)
        return _cell_sums(entries, cell) / lengths


def _cell_sums(entries: np.ndarray, cell: int) -> np.ndarray:
    """Sum of every ``cell`` consecutive bytes of ``entries`` (0 or 1 each; a whole number of cells)."""
    if cell in (2, 4, 8):
        # a cell as one unsigned integer of `cell` bytes: times 0x0101...01, its top byte
        # is the sum of its bytes (at most 8: no carry reaches it)
        word = np.dtype(f"<u{cell}")
        ones = word.type(int.from_bytes(bytes([1] * cell), "little"))
        return (entries.view(word) * ones) >> (8 * (cell - 1))
    return entries.reshape(-1, cell).sum(axis=1, dtype=np.int64)


def character_vector(
    src: SourceArrays,
    text: PageText,
    *,
    ignore_anchors: bool = False,
    whitespace_in_vector: bool = True,
    attributes_in_vector: bool = True,
) -> CharacterVector:
    """The character based content code vector (§III-A, §III-B).

    Entry 0.0 for a character of a tag (code), 1.0 for any other character (content).
    ACCB leaves the anchor tags out "entirely" (§III-C).  ``whitespace_in_vector=False``
    and ``attributes_in_vector=False`` leave out whitespace and the attribute part of the
    tags (after the name, before ``>``) too (dev-set refinements; the paper's vector keeps
    both).
    """
    memo = _memo(src)
    key = ("vector", whitespace_in_vector, attributes_in_vector)
    if key not in memo:  # CCB and ACCB share all but the anchors
        code = src.tag_end - src.tag_start
        if not attributes_in_vector:  # "<", "/" if closing, the name and ">"
            code = np.minimum(code, 2 + src.tag_closing + _name_lengths(src))
        bounds = np.concatenate(([0], text.tag_pos, [text.size]))
        memo[key] = (code, np.diff(bounds if whitespace_in_vector else text.letters_before[bounds]))
    code, content = memo[key]
    if ignore_anchors:
        code = np.where(_anchors(src), 0, code)
    runs = np.empty(2 * code.size + 1, dtype=np.int64)
    runs[0::2] = content
    runs[1::2] = code
    code_before = np.zeros(code.size + 1, dtype=np.int64)
    np.cumsum(code, out=code_before[1:])
    return CharacterVector(runs, code_before, whitespace_in_vector)


def token_content_code_vector(words: TextWords, tags: int) -> tuple[np.ndarray, np.ndarray]:
    """The token based content code vector (§III-A): 0.0 per tag, 1.0 per word, in order.

    ``words`` must split at every tag (:func:`text_words` with ``tags_break_words``);
    ``tags`` is the number of tags.  Returns the vector and the vector position of each word.
    """
    word_entry = np.arange(words.count) + words.tags_first  # its rank plus the tags before it
    vector = np.zeros(tags + words.count, dtype=np.float64)
    vector[word_entry] = 1.0
    return vector, word_entry


def _text_of_words(src: SourceArrays, text: PageText, words: TextWords, selected: np.ndarray) -> str:
    """The text with the letters of the words not selected left out (whitespace stays, so that
    words stay apart): :meth:`SourceArrays.text_of`, computed on the text with its line breaks
    (:attr:`SourceArrays.block_text`, or the stretch of it that the selected words span).

    The selected words come in a few runs of consecutive words: each run's stretch of the text
    is kept as it is, and what lies between two runs (whitespace, line breaks and the letters
    of the words left out) becomes a line break if it holds one, else a space if it holds
    whitespace, else nothing — what :func:`~.source.clean_text` makes of the whitespace left there.
    """
    if selected.all():
        return src.full_text
    padded = np.zeros(selected.size + 2, dtype=bool)
    padded[1:-1] = selected
    change = np.flatnonzero(padded[1:] != padded[:-1])  # where runs of selected words start and stop
    if change.size == 0:
        return ""
    run_first = words.first[change[0::2]]
    run_last = words.last[change[1::2] - 1]
    if "block_text" in src.__dict__:  # made already (CETR): read the runs there
        base, block_text, block_pos = 0, src.block_text, text.tag_pos[src.tag_is_block]
    else:  # only the stretch from the first run to the last, without naming the tags outside
        base = int(run_first[0])
        block_text, block_pos = src.block_text_between(base, int(run_last[-1]) + 1)
    # a word lies between two block tags: its line breaks before it are those before its first letter
    starts = (run_first - base + np.searchsorted(block_pos, run_first, side="right")).tolist()
    last_first = words.first[change[1::2] - 1]
    ends = (run_last + 1 - base + np.searchsorted(block_pos, last_first, side="right")).tolist()
    pieces = [block_text[starts[0] : ends[0]]]
    for start, end, previous_end in zip(starts[1:], ends[1:], ends[:-1], strict=True):
        gap = block_text[previous_end:start]
        if "\n" in gap:
            pieces.append("\n")
        elif gap:
            solid = gap.split()
            if len(solid) != 1 or len(solid[0]) != len(gap):  # some whitespace
                pieces.append(" ")
        pieces.append(block_text[start:end])
    return clean_string("".join(pieces))


# --- the methods -------------------------------------------------------------------------


def _kernel(params: dict[str, Any], cell: int = 1) -> np.ndarray:
    """The Gaussian of the parameters, on a grid of ``cell`` elements per entry."""
    radius = int(params["range"])
    key = (radius, float(params["sigma_per_range"]), cell)
    kernel = _KERNELS.get(key)
    if kernel is None:
        kernel = gaussian_kernel(int(round(radius / cell)), key[1] * radius / cell)
        kernel.flags.writeable = False
        if len(_KERNELS) >= 32:
            _KERNELS.clear()
        _KERNELS[key] = kernel
    return kernel


_KERNELS: dict[tuple[int, float, int], np.ndarray] = {}


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
    text = _page_text(src)
    words = _text_words(src, tags_break_words=False)
    vector = character_vector(
        src,
        text,
        ignore_anchors=ignore_anchors,
        whitespace_in_vector=bool(params["whitespace_in_vector"]),
        attributes_in_vector=bool(params["attributes_in_vector"]),
    )
    threshold = float(params["threshold"])
    cell = max(int(params["chars_per_cell"]), 1)
    if cell == 1:  # the paper: one entry per character
        letters = np.flatnonzero(text.is_letter)
        letter_entry = vector.entry(letters, np.arange(letters.size), text.tags_before(letters))

        def extracted_by(ratios: np.ndarray) -> np.ndarray:
            """Whole words (§III-C): a word is extracted entirely when one of its characters is above t."""
            if words.count == 0:
                return np.zeros((len(ratios), 0), dtype=bool)
            above = ratios.take(letter_entry, axis=1) > _at_most(threshold, ratios.dtype)
            return np.logical_or.reduceat(above, words.rank, axis=1)

        outcome, scores = _run(params, vector.values(), extracted_by, words.count)
    else:  # blurred on cells of `cell` characters, ratios interpolated in between
        cells = vector.cell_means(cell)
        spans = WordSpans.on_cells(
            vector.entry(words.first, words.rank, words.tags_first),
            vector.entry(words.last, words.rank + words.length - 1, words.tags_last),
            cell,
        )
        initial = np.full(words.count, 1.0 > threshold)  # unblurred, every letter is 1
        outcome, scores = _run(
            params, cells, lambda ratios: spans.extracted(ratios, threshold), words.count, cell, initial
        )
        scores["vector_length"] = float(vector.size)
        scores["cells"] = float(cells.size)
    scores["chars_per_cell"] = float(cell)
    return _text_of_words(src, text, words, outcome.extracted), scores


def token_ccb(doc: Document, params: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """Token based content code blurring (§III-A): tags and words are the atomic elements."""
    src = doc.source
    words = _text_words(src, tags_break_words=True)
    content_code, word_entry = token_content_code_vector(words, src.tag_start.size)
    threshold = float(params["threshold"])

    def extracted_by(ratios: np.ndarray) -> np.ndarray:
        """Word tokens whose content code ratio is above t (§III-C)."""
        return ratios.take(word_entry, axis=1) > _at_most(threshold, ratios.dtype)

    outcome, scores = _run(params, content_code, extracted_by, words.count)
    # a word the page renders whole (``a<b>b</b>``: one word, two tokens) is kept whole when one
    # of its tokens is, as CCB keeps a word when one of its characters is (§III-C)
    rendered = _text_words(src, tags_break_words=False)
    kept = np.zeros(rendered.count, dtype=bool)
    kept[np.searchsorted(rendered.first, words.first[outcome.extracted], side="right") - 1] = True
    return _text_of_words(src, _page_text(src), rendered, kept), scores


def ccb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CCB: character based content code blurring (§III; range 40, t = 0.75, §IV-A)."""
    return MethodResult(*character_ccb(doc, params, ignore_anchors=False))


def accb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """ACCB: CCB with the anchor tags left out of the content code vector (§III-C)."""
    return MethodResult(*character_ccb(doc, params, ignore_anchors=True))


def tccb(doc: Document, params: dict[str, Any]) -> MethodResult:
    """TCCB: token based content code blurring (§III-A; range 25, §IV-A)."""
    return MethodResult(*token_ccb(doc, params))
