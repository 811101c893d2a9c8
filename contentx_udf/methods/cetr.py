"""CETR -- Content Extraction via Tag Ratios (Weninger, Hsu & Han, WWW 2010; Weninger & Hsu,
"Web content extraction through histogram clustering", ANNIE 2008).

Every method works on the lines of the cleaned ``<body>`` source (:attr:`Document.source`:
script, style and comments are already gone):

1. Lines.  Line breaks are the newlines outside tags; lines longer than ``rebreak_over``
   characters are re-broken every ``rebreak_chars`` characters at whitespace or between two
   tags, never inside a tag or a word (overview, FAQ "What if the Web page has all of the code on
   one line?").  Blank lines are dropped.
2. Text-to-tag ratio per line (overview, "Tag Ratios"): text characters of the trimmed line
   outside tags over the number of tags on the line; a line without tags has TTR = its text
   length.  An entity escape (``&amp;``) counts as the one character it stands for.
3. Gaussian smoothing of the TTR histogram (histogram paper, Eq. 1-3).
4. Partitioning:

   * ``cetr-tm`` -- threshold: content iff smoothed TTR >= lambda * std(smoothed TTR)
     (histogram paper, "Threshold partitioning").
   * ``cetr-km`` -- the 2-D model (smoothed TTR, smoothed absolute moving-average derivative,
     Eq. 4) clustered with k-means; the cluster whose centroid is nearest the origin is
     non-content (overview, "Extraction in two dimensions").
   * ``cetr`` -- CETR's tailored clustering on the same model: k-means whose non-content
     centroid is held at the origin during the iterations (WWW'10).
   * ``cetr-dff`` -- density farthest-first (Weka's ``MakeDensityBasedClusterer`` around
     ``FarthestFirst``) on the same model, the winner of the histogram paper (Table 2).

5. The selected lines' spans become text as :meth:`SourceArrays.text_of_spans` makes it (the
   text of :meth:`SourceArrays.text_of` for those characters), read off the page's block text
   (:attr:`SourceArrays.block_text`, which CCB shares) at places computed once per page.

Everything is numpy over the text between the tags, the tags and the lines; the only Python
loops are the bounded clustering iterations.  The lines (and the text of a selection) are
computed once per page and parameters and shared by the four methods (``source.memo``), so
:func:`~contentx_udf.extract_all` pays for them once.

Readings and deviations (parameter names in ``settings.DEFAULTS``; the papers' values stay
reachable):

* Re-breaking: lines over ``rebreak_over`` = 200 characters are cut every ``rebreak_chars`` =
  150 (the FAQ: every 60 -- ``rebreak_over = rebreak_chars = 60``).  A break falls at the first
  whitespace outside tags, or boundary between two tags, at or after each mark.
* Smoothing: ``sigma`` = 5 (the overview's "radius of 3" is sigma 3; ``sigma_from_histogram``
  uses the std of the TTR histogram, as the histogram paper suggests).  Eq. 3 leaves the first
  and last ceil(sigma) lines undefined: there the kernel is cut and renormalised.
* Eq. 4 is read as its text says, "the mean of the next three elements" minus h'_i
  (sum over j = 1..q); the formula as printed sums j = 0..q over q, which is not a derivative
  (a constant histogram gets h/q) and scores 0.01 lower.  The last q lines use the values that
  exist, so g has one value per line.
* Text characters: the line is trimmed (as the authors' Java code does); an entity escape counts
  once (``count_entities_once``; Lexbor writes exactly ``&amp; &lt; &gt; &nbsp;`` in text).
* Clustering is deterministic: farthest-first starts at the point nearest the origin (Weka:
  a random point with a fixed seed), k-means starts from farthest-first centres.  Both
  dimensions are divided by their maximum (``normalize_dimensions``; Weka normalises
  attributes by default, dividing keeps the origin in place).  When every line falls in one
  cluster, that cluster is content.  Pages of more than :data:`MAX_FIT_POINTS` lines are
  fitted on an even sample, then every line is assigned.

Development set (scrapinghub, 181 pages, shingle precision / recall / F1; full text: F1 0.671).
"Paper" = ``rebreak_over = rebreak_chars = 60, sigma = 3``; "raw" = the same with
``normalize_dimensions = False``:

    method     paper                  defaults               raw (F1)
    cetr-tm    0.700 / 0.972 / 0.814  0.775 / 0.971 / 0.862  --
    cetr-km    0.770 / 0.958 / 0.854  0.837 / 0.948 / 0.889  0.811
    cetr       0.712 / 0.976 / 0.823  0.813 / 0.962 / 0.881  0.784
    cetr-dff   0.796 / 0.948 / 0.866  0.840 / 0.939 / 0.887  0.836
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..page.document import Document, SourceArrays
from ..page.source import clean_string
from .base import MethodResult

_NEWLINE, _SPACE = ord("\n"), ord(" ")

# --- lines -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lines:
    """The non-blank lines of a source: character spans and TTR counts.

    Line ``i`` covers characters ``start[i]:end[i]`` of the source.  Shared by the CETR
    methods of one page (:func:`source_lines` keeps it in the source's memo): read only.
    """

    start: np.ndarray  # int64 first character
    end: np.ndarray  # int64 one past the last character
    text_chars: np.ndarray  # int64 text characters (trimmed, outside tags, entities as one)
    tags: np.ndarray  # int64 tags starting on the line
    rebroken: int  # lines created by re-breaking long lines

    @property
    def size(self) -> int:
        return len(self.start)


def _rebreak(
    source: SourceArrays, starts: np.ndarray, ends: np.ndarray, every: int, over: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Extra line starts that re-break every line longer than ``over`` characters, with, for
    each, the text characters and the tags before it.

    Overview FAQ: "we insert a newline character into the HTML code after 60 (or so)
    characters.  If that 60th character is in the middle of a tag, then we insert the newline
    after the end of the tag."  Here a break goes at the first candidate at or after each
    ``every``-character mark of the line; candidates are whitespace outside tags and the
    boundary between two adjacent tags, so no tag and no word is cut.
    """
    none = np.zeros(0, dtype=np.int64)
    if every <= 0:
        return none, none, none
    long_lines = (ends - starts > max(over, every)).nonzero()[0]
    if long_lines.size == 0:
        return none, none, none
    l_start, l_end = starts[long_lines], ends[long_lines]
    # marks at l_start + every * m, m = 1 .. (length - 1) // every: mark i of the page, the
    # first_of-th of its line, lies at every * i + l_start - every * (first_of - 1)
    n_marks = (l_end - l_start - 1) // every
    first_of = n_marks.cumsum() - n_marks
    marks = (l_start - every * (first_of - 1)).repeat(n_marks)
    marks += every * np.arange(marks.size)
    line_end = l_end.repeat(n_marks)
    # the first whitespace character of the text at or after each mark: the text characters
    # at or after a mark are those from its text position on
    space = (source.text_codes <= _SPACE).nonzero()[0]
    pick = space.searchsorted(source.text_position(marks))
    if space.size:
        found = pick < space.size
        text_at = space.take(pick, mode="clip")
        tags_at = source.text_part[text_at]
        chosen = np.where(found, text_at + source.tag_chars_before[tags_at], line_end)
    else:  # no whitespace at all
        text_at, tags_at, chosen = pick, pick, line_end
    # or a tag that starts where the previous one ends (no text between them), if earlier
    between = (source.text_lengths[1:-1] == 0).nonzero()[0] + 1
    if between.size:
        tag = between.take(source.tag_start[between].searchsorted(marks), mode="clip")
        at = source.tag_start[tag]
        use_tag = (at >= marks) & (at < chosen)
        if use_tag.any():
            chosen = np.where(use_tag, at, chosen)
            text_at = np.where(use_tag, source.text_offset[tag], text_at)
            tags_at = np.where(use_tag, tag, tags_at)
    valid = chosen < line_end  # the candidate must lie on the same line
    keep = valid.copy()  # marks of one line may pick the same candidate: keep the first
    keep[1:] &= ~(valid[:-1] & (chosen[1:] == chosen[:-1]))
    return chosen[keep], text_at[keep], tags_at[keep]


#: Lexbor's serialiser escapes exactly four characters in text: ``&amp; &lt; &gt; &nbsp;``.
#: The letter after ``&`` tells the escape's surplus characters beyond the one it stands for.
_ENTITY_SURPLUS = np.zeros(256, dtype=np.int64)
_ENTITY_SURPLUS[[ord("a"), ord("l"), ord("g"), ord("n")]] = [4, 3, 3, 5]


def entity_extra_chars(source: SourceArrays) -> tuple[np.ndarray, np.ndarray]:
    """Text positions (indices into ``source.text_codes``) of the entity escapes and the
    characters each adds beyond one (``&amp;`` -> 4).  Lexbor escapes every ``&`` of a text
    node, so each ``&`` outside a tag starts one of its four escapes; the letter after it must
    be in the same text (a ``&`` right before a tag is no escape)."""
    text = source.text_codes
    amp = (text == ord("&")).nonzero()[0]
    if amp.size == 0:
        return amp, amp
    part = source.text_part
    amp = amp[part.take(amp + 1, mode="clip") == part[amp]]  # (clipped: the last "&" itself)
    amp = amp[amp + 1 < text.size]
    surplus = _ENTITY_SURPLUS[np.minimum(text[amp + 1], 255)]
    keep = surplus > 0
    return amp[keep], surplus[keep]


def source_lines(source: SourceArrays, params: dict[str, Any]) -> Lines:
    """Split the source into lines (re-breaking long ones), count text and tags per line,
    and drop blank lines (overview, "Tag Ratios"; FAQ on one-line pages).

    Computed once per source and parameters (kept in ``source.memo``)."""
    key = _lines_key(params)
    lines = source.memo.get(key)
    if lines is None:
        lines = source.memo[key] = _source_lines(source, *key[1:])
    return lines


def _lines_key(params: dict[str, Any]) -> tuple:
    return (
        "cetr-lines",
        int(params["rebreak_chars"]),
        int(params["rebreak_over"]),
        bool(params["count_entities_once"]),
    )


def _source_lines(source: SourceArrays, every: int, over: int, entities_once: bool) -> Lines:
    n = source.size
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return Lines(z, z, z, z, 0)
    # every line start with the text characters (lo) and the tags (k) before it: 0, and after
    # each newline of the text
    text = source.text_codes
    newline = (text == _NEWLINE).nonzero()[0]
    k = source.text_part[newline]
    starts = np.concatenate(([0], newline + 1 + source.tag_chars_before[k]))
    lo = np.concatenate(([0], newline + 1))
    k = np.concatenate(([0], k))
    ends = np.concatenate((starts[1:], [n]))
    extra, extra_lo, extra_k = _rebreak(source, starts, ends, every, over)
    if extra.size:  # a re-break right after a newline makes an empty line, dropped below
        order = np.concatenate((starts, extra)).argsort(kind="stable")
        starts = np.concatenate((starts, extra))[order]
        lo = np.concatenate((lo, extra_lo))[order]
        k = np.concatenate((k, extra_k))[order]
    if starts[-1] == n:  # a newline at the very end
        starts, lo, k = starts[:-1], lo[:-1], k[:-1]
    ends = np.concatenate((starts[1:], [n]))

    # trimmed text: from the first to the last non-whitespace text character of each line,
    # counted in text coordinates (the tags between them drop out)
    solid = (text > _SPACE).nonzero()[0]
    first = solid.searchsorted(lo)
    last = np.concatenate((first[1:], [solid.size])) - 1
    if solid.size:  # (clipped where the line has none: those lines get 0)
        span = solid.take(last, mode="clip") - solid.take(first, mode="clip") + 1
        text_chars = np.where(last >= first, span, 0)
    else:
        text_chars = np.zeros(starts.size, dtype=np.int64)
    if entities_once:
        amp, more = entity_extra_chars(source)
        if amp.size:
            line_of = lo.searchsorted(amp, side="right") - 1
            surplus = np.bincount(line_of, weights=more, minlength=starts.size).astype(np.int64)
            text_chars = np.maximum(text_chars - surplus, 0)
    tags = np.empty_like(k)  # tags starting on the line
    tags[:-1] = k[1:] - k[:-1]
    tags[-1] = source.tag_start.size - k[-1]

    nonblank = (text_chars > 0) | (tags > 0)
    return Lines(
        start=starts[nonblank],
        end=ends[nonblank],
        text_chars=text_chars[nonblank],
        tags=tags[nonblank],
        rebroken=int(extra.size),
    )


def text_to_tag_ratio(text_chars: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """TTR of each line (overview, "Tag Ratios"): text characters / tags, and the text length
    itself on a line without tags."""
    return np.asarray(text_chars, dtype=np.float64) / np.maximum(np.asarray(tags, dtype=np.float64), 1.0)


# --- smoothing and the 2-D model ------------------------------------------------------------


def gaussian_kernel(sigma: float, max_radius: int | None = None) -> np.ndarray:
    """Normalised discrete Gaussian kernel of width 2*ceil(sigma)+1 (histogram paper, Eq. 1-2):
    ``k_i = exp(-j^2 / (2 sigma^2))`` for ``j = i - ceil(sigma)``, divided by its sum.

    ``max_radius`` cuts the tails (a histogram of n lines never reaches beyond n - 1).
    """
    if sigma <= 0:
        return np.ones(1)
    radius = math.ceil(sigma)
    if max_radius is not None:
        radius = max(min(radius, max_radius), 0)
    key = (sigma, radius)
    kernel = _KERNELS.get(key)
    if kernel is None:
        j = np.arange(-radius, radius + 1, dtype=np.float64)
        k = np.exp(-(j * j) / (2.0 * sigma * sigma))
        kernel = k / k.sum()
        kernel.flags.writeable = False
        if len(_KERNELS) < 256:
            _KERNELS[key] = kernel
    return kernel


_KERNELS: dict[tuple[float, int], np.ndarray] = {}  # (sigma, radius) -> kernel, read-only


_DIRECT_CONVOLUTION_WORK = 20_000_000  # above this many multiply-adds, convolve by FFT


def _convolve_same(values: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``np.convolve(values, kernel, "same")`` for an odd kernel no longer than ``values``,
    by FFT when the direct sum would be slow (a wide kernel on a long histogram)."""
    if values.size * kernel.size <= _DIRECT_CONVOLUTION_WORK:
        return np.convolve(values, kernel, mode="same")
    size = 1 << (values.size + kernel.size - 2).bit_length()  # a power of two >= n + k - 1
    full = np.fft.irfft(np.fft.rfft(values, size) * np.fft.rfft(kernel, size), size)
    half = kernel.size // 2
    return full[half : half + values.size]


def smooth_gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Convolve ``values`` with the kernel of Eq. 1-2 (Eq. 3).

    Eq. 3 defines the smoothed value only ``ceil(sigma)`` lines away from both ends; nearer the
    ends the kernel is cut to the lines that exist and renormalised.
    """
    values = np.asarray(values, dtype=np.float64)
    return _Smoother(values.size, sigma)(values)


class _Smoother:
    """:func:`smooth_gaussian` for ``n`` values: the kernel and the renormalisation computed once
    for every series of that length."""

    def __init__(self, n: int, sigma: float):
        self.n = n
        self.identity = n <= 1 or sigma <= 0
        if self.identity:
            return
        self.kernel = gaussian_kernel(sigma, max_radius=n - 1)
        self.pad = max(self.kernel.size - n, 0)  # 'same' needs the signal at least as long as the kernel
        weight = np.ones(n + self.pad)
        weight[n:] = 0.0
        self.den = _convolve_same(weight, self.kernel)[:n]

    def __call__(self, values: np.ndarray) -> np.ndarray:
        if self.identity:
            return np.array(values, dtype=np.float64)
        if self.pad:
            values = np.concatenate((values, np.zeros(self.pad)))
        return _convolve_same(values, self.kernel)[: self.n] / self.den


def moving_average_derivative(smoothed: np.ndarray, alpha: int) -> np.ndarray:
    """Eq. 4 of the histogram paper: the mean of the next ``alpha`` values minus the value,
    ``g_i = (sum_{j=1..alpha} h'_{i+j}) / alpha - h'_i`` ("we subtract h'_i from the mean of the
    next three elements").  Near the end the mean is over the values that exist; the last line
    gets 0."""
    n = smoothed.size
    if n == 0 or alpha <= 0:
        return np.zeros(n)
    cum = np.empty(n + 1)
    cum[0] = 0.0
    smoothed.cumsum(out=cum[1:])
    out = np.empty(n)
    full = max(n - alpha, 0)  # lines with alpha next values
    out[:full] = (cum[1 + alpha : n + 1] - cum[1 : full + 1]) / alpha - smoothed[:full]
    if full < n - 1:  # the last lines: the next values that exist
        count = np.arange(n - 1 - full, 0, -1)
        out[full : n - 1] = (cum[n] - cum[full + 1 : n]) / count - smoothed[full : n - 1]
    out[n - 1] = 0.0
    return out


def sigma_for(ttr: np.ndarray, params: dict[str, Any]) -> float:
    """The smoothing sigma: the parameter (overview: "Gaussian smoothing with a radius of 3"), or
    the standard deviation of the TTR histogram with ``sigma_from_histogram`` (histogram paper,
    after Eq. 1: "as the variance of h increases, smoothing necessity also increases")."""
    if params["sigma_from_histogram"]:
        return float(ttr.std()) if ttr.size else 0.0
    return float(params["sigma"])


def two_dimensional_model(ttr: np.ndarray, sigma: float, alpha: int) -> np.ndarray:
    """Points ``(h'_i, g'_i)``: smoothed TTR and the absolute Gaussian-smoothed moving-average
    derivative (histogram paper, "Histogram clustering in 2-dimensions", Eq. 4)."""
    ttr = np.asarray(ttr, dtype=np.float64)
    smoother = _Smoother(ttr.size, sigma)
    return _points(smoother, smoother(ttr), alpha)


def _points(smoother: _Smoother, smoothed: np.ndarray, alpha: int) -> np.ndarray:
    derivative = np.abs(smoother(moving_average_derivative(smoothed, alpha)))
    points = np.empty((smoothed.size, 2))
    points[:, 0] = smoothed
    points[:, 1] = derivative
    return points


class LineModel:
    """What the CETR methods of a page share for one reading of the lines (kept in the source's
    memo): the lines, their TTR, the smoothing sigma, the smoothed TTR and the 2-D points."""

    def __init__(self, lines: Lines, params: dict[str, Any]):
        self.lines = lines
        self.ttr = text_to_tag_ratio(lines.text_chars, lines.tags)
        self.sigma = sigma_for(self.ttr, params)
        self.smoother = _Smoother(lines.size, self.sigma)
        self.smoothed = self.smoother(self.ttr)
        self._points: dict[Any, Any] = {}

    def points(self, alpha: int) -> np.ndarray:
        """:func:`two_dimensional_model` of the lines."""
        if alpha not in self._points:
            self._points[alpha] = _points(self.smoother, self.smoothed, alpha)
        return self._points[alpha]

    def scaled_points(self, alpha: int, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`points` divided by their maximum per dimension (``normalize``, where it is
        positive), and the divisors."""
        key = (alpha, normalize)
        if key not in self._points:
            points = self.points(alpha)
            scale = np.ones(2)
            if normalize:
                top = np.array([points[:, 0].max(), points[:, 1].max()])
                scale = np.where(top > 0, top, 1.0)
            self._points[key] = (points / scale, scale)
        return self._points[key]

    def fit_points(self, alpha: int, normalize: bool) -> FitPoints:
        """:class:`FitPoints` of :meth:`scaled_points`: what the three clusterings share."""
        key = ("fit", alpha, normalize)
        if key not in self._points:
            self._points[key] = FitPoints(self.scaled_points(alpha, normalize)[0])
        return self._points[key]


def line_model(source: SourceArrays, params: dict[str, Any]) -> LineModel:
    """The :class:`LineModel` of ``source`` under ``params``, computed once per page."""
    key = ("cetr-model", _lines_key(params), float(params["sigma"]), bool(params["sigma_from_histogram"]))
    model = source.memo.get(key)
    if model is None:
        model = source.memo[key] = LineModel(source_lines(source, params), params)
    return model


# --- clustering ------------------------------------------------------------------------------


def farthest_first_centres(points: np.ndarray, k: int, *, from_origin: bool = False) -> np.ndarray:
    """Indices of up to ``k`` centres chosen farthest-first (Hochbaum & Shmoys 1985): each next
    centre is the point farthest from the centres chosen so far.

    The start is deterministic (Weka starts from a random point): the point nearest the
    origin, or with ``from_origin`` the origin itself counts as an already chosen centre (it
    is not returned).  Fewer than ``k`` indices come back when the points run out.
    """
    return _farthest_first(points[:, 0].copy(), points[:, 1].copy(), k, from_origin)


def _farthest_first(x: np.ndarray, y: np.ndarray, k: int, from_origin: bool) -> np.ndarray:
    """:func:`farthest_first_centres` of the points ``(x, y)`` (contiguous copies)."""
    nearest = x * x + y * y
    chosen: list[int] = []
    if not from_origin and x.size:
        chosen.append(int(nearest.argmin()))
        nearest = _squared_distance(x, y, chosen[0])
    while len(chosen) < min(k, x.size):
        nxt = int(nearest.argmax())
        if nearest[nxt] <= 0:
            break  # every point coincides with a centre
        chosen.append(nxt)
        np.minimum(nearest, _squared_distance(x, y, nxt), out=nearest)
    return np.array(chosen, dtype=np.int64)


def _squared_distance(x: np.ndarray, y: np.ndarray, i: int) -> np.ndarray:
    """``(x - x[i]) ** 2 + (y - y[i]) ** 2``."""
    dx = x - x[i]
    dx *= dx
    dy = y - y[i]
    dy *= dy
    dx += dy
    return dx


#: Clustering is fitted on at most this many lines (an even sample of longer pages); all
#: lines are then assigned to the fitted clusters.  The dev set's longest page has 2,300.
MAX_FIT_POINTS = 20_000


def fit_sample(points: np.ndarray) -> np.ndarray:
    """Every ``s``-th point, ``s`` chosen so that at most :data:`MAX_FIT_POINTS` remain."""
    stride = -(-points.shape[0] // MAX_FIT_POINTS)
    return points[::stride] if stride > 1 else points


class FitPoints:
    """Points to cluster with their :func:`fit_sample` as the clusterers read it: the
    coordinates as contiguous arrays, the rows ``(x, y, 1)`` and the farthest-first centres
    (CETR-KM and CETR-DFF start from the same ones).  Computed once per page and model
    (:meth:`LineModel.fit_points`)."""

    def __init__(self, points: np.ndarray):
        self.points = points
        self.fit = fit_sample(points)
        self.x = self.fit[:, 0].copy()
        self.y = self.fit[:, 1].copy()
        self._centres: dict[tuple[int, bool], np.ndarray] = {}
        self._extended: np.ndarray | None = None

    def centres(self, k: int, from_origin: bool) -> np.ndarray:
        """:func:`farthest_first_centres` of the fitted points (indices into :attr:`fit`)."""
        key = (k, from_origin)
        found = self._centres.get(key)
        if found is None:
            found = self._centres[key] = _farthest_first(self.x, self.y, k, from_origin)
        return found

    @property
    def extended(self) -> np.ndarray:
        """The fitted points as rows ``(x, y, 1)``: the squared distance to a centroid, less
        ``|p|^2``, is one product with ``(-2 cx, -2 cy, cx^2 + cy^2)``."""
        if self._extended is None:
            extended = np.empty((self.fit.shape[0], 3))
            extended[:, :2] = self.fit
            extended[:, 2] = 1.0
            self._extended = extended
        return self._extended


def nearest_centroid(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the nearest centroid of each point:
    ``argmin_j |p - c_j|^2 = argmin_j (|c_j|^2 - 2 p.c_j)``, one small matrix product."""
    return (points @ (-2.0 * centroids.T) + (centroids * centroids).sum(axis=1)).argmin(axis=1)


@dataclass(frozen=True)
class Clustering:
    """Cluster labels of the lines, the centroids and the non-content cluster."""

    labels: np.ndarray
    centroids: np.ndarray  # (k, 2) in the units of the 2-D model
    noncontent: int
    iterations: int


def kmeans(
    points: np.ndarray, k: int, max_iter: int, *, origin_fixed: bool = False, fitted: FitPoints | None = None
) -> Clustering:
    """Lloyd's k-means on 2-D points with a deterministic farthest-first initialisation.

    ``origin_fixed`` (CETR's tailored clustering, WWW'10): centroid 0 is the origin and stays
    there, the other ``k - 1`` start farthest-first from it and move; cluster 0 is
    non-content.  Otherwise the cluster whose centroid is nearest the origin is non-content
    (overview, "Extraction in two dimensions").  Iterates until no label changes, at most
    ``max_iter`` times, on :func:`fit_sample` of the points (``fitted``: their
    :class:`FitPoints`, if already made).
    """
    if fitted is None:
        fitted = FitPoints(points)
    x, y = fitted.x, fitted.y
    if origin_fixed:
        first = fitted.centres(k - 1, True)
        cx, cy = [0.0, *x.take(first).tolist()], [0.0, *y.take(first).tolist()]
    else:
        first = fitted.centres(k, False)
        cx, cy = x.take(first).tolist(), y.take(first).tolist()
    k = len(cx)
    movable = [not origin_fixed] + [True] * (k - 1)
    labels = None
    # nearest_centroid as one product: (x, y, 1) . (-2 cx, -2 cy, cx^2 + cy^2), the constant
    # term added last as there (same values, checked on the development set)
    extended = fitted.extended
    iterations = 0
    for iterations in range(1, max(max_iter, 1) + 1):  # noqa: B007
        toward = np.array(
            [
                [-2.0 * a for a in cx],
                [-2.0 * b for b in cy],
                [a * a + b * b for a, b in zip(cx, cy, strict=True)],
            ]
        )
        new = (extended @ toward).argmin(axis=1)
        if labels is not None and new.tobytes() == labels.tobytes():
            break
        labels = new
        counts = np.bincount(labels, minlength=k).tolist()
        sum_x = np.bincount(labels, weights=x, minlength=k).tolist()
        sum_y = np.bincount(labels, weights=y, minlength=k).tolist()
        for c in range(k):
            if movable[c] and counts[c]:
                cx[c], cy[c] = sum_x[c] / counts[c], sum_y[c] / counts[c]
    centroids = np.array([cx, cy]).T.copy()
    if fitted.fit is not points or iterations == max_iter:
        labels = nearest_centroid(points, centroids)
    noncontent = 0 if origin_fixed else int((centroids * centroids).sum(axis=1).argmin())
    return Clustering(labels=labels, centroids=centroids, noncontent=noncontent, iterations=iterations)


def density_farthest_first(
    points: np.ndarray, k: int, min_std: float, fitted: FitPoints | None = None
) -> Clustering:
    """Weka's ``MakeDensityBasedClusterer`` around ``FarthestFirst`` (histogram paper, Table 2,
    "Density Farthest First"): farthest-first clusters, then one normal distribution per cluster
    and dimension (mean, std of its members, std at least ``min_std``) with the cluster's share
    of the lines as prior; each line goes to the cluster of highest ``log prior + log density``.
    The cluster whose mean is nearest the origin is non-content.  ``fitted``: the points'
    :class:`FitPoints`, if already made."""
    if fitted is None:
        fitted = FitPoints(points)
    fit, x, y = fitted.fit, fitted.x, fitted.y
    centres = fit[fitted.centres(k, False)]
    k = centres.shape[0]
    first = nearest_centroid(fit, centres)
    counts = np.bincount(first, minlength=k).astype(np.float64)
    # per dimension (rows x, y) and cluster: the sums of the members and of their squares
    s1, s2 = np.empty((2, k)), np.empty((2, k))
    for d, values in enumerate((x, y)):
        s1[d] = np.bincount(first, weights=values, minlength=k)
        s2[d] = np.bincount(first, weights=values * values, minlength=k)
    members = np.maximum(counts, 1)
    mean = s1 / members
    std = np.maximum(np.sqrt(np.maximum(s2 / members - mean * mean, 0.0)), min_std)
    log_prior = np.log((counts + 1.0) / (counts.sum() + k))  # Laplace, as Weka
    log_norm = np.log(std).sum(axis=0)
    # log prior + log density of every line under every cluster, one row per cluster:
    # -0.5 * (zx^2 + zy^2) - log sx - log sy + log prior
    if fitted.fit is not points:
        x, y = points[:, 0], points[:, 1]
    zx = x - mean[0][:, None]
    zx /= std[0][:, None]
    zx *= zx
    zy = y - mean[1][:, None]
    zy /= std[1][:, None]
    zy *= zy
    zx += zy
    zx *= -0.5
    zx -= log_norm[:, None]
    zx += log_prior[:, None]
    labels = zx.argmax(axis=0)
    means = np.ascontiguousarray(mean.T)
    noncontent = int(np.einsum("kd,kd->k", means, means).argmin())
    return Clustering(labels=labels, centroids=means, noncontent=noncontent, iterations=1)


# --- output ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineText:
    """The lines' places in the page text with block breaks (:attr:`SourceArrays.block_text`),
    computed once per page and shared by the four methods (``source.memo``).

    Line ``i`` is ``text[lo[i]:hi[i]]``; ``blocks_at_start`` / ``blocks_at_end`` count the block
    tags before its start and its end, ``touches[i]`` whether it starts where line ``i - 1``
    ends.  This is :meth:`SourceArrays.text_of_spans` with the per-page part done once.
    """

    text: str
    lo: np.ndarray
    hi: np.ndarray
    blocks_at_start: np.ndarray
    blocks_at_end: np.ndarray
    touches: np.ndarray


def line_text(source: SourceArrays, lines: Lines) -> LineText:
    """The :class:`LineText` of ``lines`` (kept in ``source.memo`` under the lines' identity)."""
    key = ("cetr-line-text", id(lines))
    found = source.memo.get(key)
    if found is None or found[0] is not lines:
        found = source.memo[key] = (lines, _line_text(source, lines))
    return found[1]


def _line_text(source: SourceArrays, lines: Lines) -> LineText:
    # block tags before each tag index, and the text and block-tag offsets of both line ends
    blocks = np.zeros(source.tag_start.size + 1, dtype=np.int64)
    source.tag_is_block.cumsum(out=blocks[1:])
    k_start = source.tag_start.searchsorted(lines.start, side="left")  # tags before
    k_end = source.tag_start.searchsorted(lines.end, side="left")
    at_start, at_end = blocks[k_start], blocks[k_end]
    touches = np.zeros(lines.size, dtype=bool)
    np.equal(lines.start[1:], lines.end[:-1], out=touches[1:])
    return LineText(
        text=source.block_text,
        lo=lines.start - source.tag_chars_before[k_start] + at_start,
        hi=lines.end - source.tag_chars_before[k_end] + at_end,
        blocks_at_start=at_start,
        blocks_at_end=at_end,
        touches=touches,
    )


def content_text(source: SourceArrays, lines: Lines, content: np.ndarray) -> str:
    """Text of the selected lines: :meth:`SourceArrays.text_of_spans` of their spans.

    The first text of a page whose tags are not named yet comes from ``text_of_spans`` itself
    (it names only the tags of the selected range: the cheaper way for one method alone);
    later ones are read off :class:`LineText` (made once, the block text shared with CCB).
    Methods of one page that select the same lines share the text (``source.memo``)."""
    if not content.any():
        return ""
    key = ("cetr-text", id(lines), content.tobytes())
    found = source.memo.get(key)
    if found is not None and found[0] is lines:
        return found[1]
    if "tag_is_block" in source.__dict__ or _FIRST_TEXT in source.memo:
        out = _text_of_lines(line_text(source, lines), content)
    else:
        source.memo[_FIRST_TEXT] = True
        out = source.text_of_spans(lines.start[content], lines.end[content])
    source.memo[key] = (lines, out)
    return out


#: Memo key: a CETR method of the page made its text already.
_FIRST_TEXT = ("cetr-text", "first")


def _text_of_lines(lt: LineText, content: np.ndarray) -> str:
    """The text of the ``content`` lines by :class:`LineText`: lines that touch merge into one
    run; a block tag between two runs breaks the line."""
    # a selected line starts a run unless the previous line is selected and touches it
    joined = content.copy()
    joined[1:] &= content[:-1]
    joined &= lt.touches
    first = (content & ~joined).nonzero()[0]
    joined[:-1] = joined[1:]
    joined[-1] = False
    last = (content & ~joined).nonzero()[0]
    lo, hi = lt.lo[first].tolist(), lt.hi[last].tolist()
    sep = ["\n" if b else "" for b in (lt.blocks_at_start[first[1:]] > lt.blocks_at_end[last[:-1]]).tolist()]
    sep.append("")
    text = lt.text
    return clean_string(
        "".join([piece for a, b, s in zip(lo, hi, sep, strict=True) for piece in (text[a:b], s)])
    )


def _base_scores(lines: Lines, sigma: float) -> dict[str, float]:
    return {"lines": float(lines.size), "rebroken_lines": float(lines.rebroken), "sigma": sigma}


def _empty() -> MethodResult:
    return MethodResult(text="", scores={"lines": 0.0, "content_lines": 0.0})


# --- the methods -------------------------------------------------------------------------------


def cetr_tm(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CETR-TM: threshold partitioning of the smoothed TTR histogram (histogram paper,
    "Threshold partitioning": content iff h'_i >= lambda * sigma', sigma' = std of h')."""
    source = doc.source
    model = line_model(source, params)
    lines, ttr, sigma, smoothed = model.lines, model.ttr, model.sigma, model.smoothed
    if lines.size == 0:
        return _empty()
    threshold = float(params["lambda_"]) * float(smoothed.std())
    content = smoothed >= threshold
    scores = _base_scores(lines, sigma)
    scores.update(
        threshold=threshold,
        content_lines=float(content.sum()),
        mean_ttr=float(ttr.mean()),
        max_smoothed_ttr=float(smoothed.max()),
    )
    return MethodResult(text=content_text(source, lines, content), scores=scores)


def _cluster_method(doc: Document, params: dict[str, Any], mode: str) -> MethodResult:
    source = doc.source
    model = line_model(source, params)
    lines, sigma = model.lines, model.sigma
    if lines.size == 0:
        return _empty()
    alpha, normalize = int(params["alpha"]), bool(params["normalize_dimensions"])
    scaled, scale = model.scaled_points(alpha, normalize)
    fitted = model.fit_points(alpha, normalize)
    k = max(int(params["k"]), 1)
    if mode == "dff":
        clusters = density_farthest_first(scaled, k, float(params["min_std_dev"]), fitted)
    else:
        clusters = kmeans(scaled, k, int(params["max_iter"]), origin_fixed=mode == "tailored", fitted=fitted)
    used = np.count_nonzero(np.bincount(clusters.labels, minlength=k))
    if used <= 1 and mode != "tailored":
        content = np.ones(lines.size, dtype=bool)  # nothing to separate: one cluster
    else:
        content = clusters.labels != clusters.noncontent
    centroids = clusters.centroids * scale
    scores = _base_scores(lines, sigma)
    scores.update(
        content_lines=float(content.sum()),
        clusters=float(centroids.shape[0]),
        iterations=float(clusters.iterations),
        noncontent_ttr=float(centroids[clusters.noncontent, 0]),
        noncontent_derivative=float(centroids[clusters.noncontent, 1]),
    )
    for c in range(centroids.shape[0]):
        scores[f"centroid_{c}_ttr"] = float(centroids[c, 0])
        scores[f"centroid_{c}_derivative"] = float(centroids[c, 1])
    return MethodResult(text=content_text(source, lines, content), scores=scores)


def cetr_km(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CETR-KM: k-means (k = 3) on the 2-D model; the cluster nearest the origin is non-content
    (overview, "Extraction in two dimensions")."""
    return _cluster_method(doc, params, "kmeans")


def cetr_tailored(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CETR: the tailored clustering of WWW'10 -- k-means on the 2-D model with the non-content
    centroid held at the origin."""
    return _cluster_method(doc, params, "tailored")


def cetr_dff(doc: Document, params: dict[str, Any]) -> MethodResult:
    """CETR-DFF: density farthest-first on the 2-D model (histogram paper, Table 2 winner)."""
    return _cluster_method(doc, params, "dff")
