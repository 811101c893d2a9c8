"""FineWeb's own quality rules, vectorised over a batch.

Penedo et al. 2024, "The FineWeb Datasets: Decanting the Web for the Finest Text Data at Scale",
§3.3 (the custom filters), as datatrove implements them in
``datatrove/pipeline/filters/fineweb_quality_filter.py`` (``FineWebQualityFilter``).  They read
the text C4 left (FineWeb runs them after C4).  Lines are the non-blank pieces of
``text.split("\\n")``; in this order a document is dropped when:

* it has no such line (``empty``);
* fewer than 12 % of its lines end in terminal punctuation (:data:`.words.TERMINAL_PUNCTUATION`);
* more than 67 % of its lines have at most 30 characters;
* its repeated lines (every occurrence after the first) hold more than 1 % of its characters
  (newlines not counted);
* it has more than 0.3 newlines per word (word-based: skipped for scripts without spaces).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...text.arrays import as_strings, count_literal, list_offsets
from ...text.words import TERMINAL_PUNCTUATION, WHITESPACE
from .settings import FineWebSettings
from .text import duplicates
from .verdicts import Verdicts, over, ratio


def _few_punctuated_lines(m, s, spaced) -> np.ndarray:
    if s.min_line_punct_ratio is None:
        return np.zeros(1, bool)
    share = ratio(m["fw_punct_lines"], m["fw_lines"])
    low = share < s.min_line_punct_ratio
    return low & (~np.asarray(s.line_punct_exclude_zero, bool) | (share > 0))


#: FineWeb's rules, in their order, as tests of the measures (:mod:`.verdicts`); the newline rule
#: applies to ``spaced`` documents only.
TESTS = {
    "empty": lambda m, s, spaced: m["fw_lines"] == 0,
    "min_line_punct_ratio": _few_punctuated_lines,
    "max_short_line_ratio": lambda m, s, spaced: over(
        ratio(m["fw_short_lines"], m["fw_lines"]), s.max_short_line_ratio
    ),
    "max_dup_line_char_ratio": lambda m, s, spaced: over(
        ratio(m["fw_dup_line_chars"], m["fw_chars"]), s.max_dup_line_char_ratio
    ),
    "max_newline_word_ratio": lambda m, s, spaced: (
        spaced & over(ratio(m["fw_newlines"], m["fw_words"]), s.max_newline_word_ratio)
    ),
}
RULES = tuple(TESTS)
_TERMINAL = pa.array(sorted(TERMINAL_PUNCTUATION), pa.large_string())


class FineWebQuality:
    """FineWeb's rules (module docstring), sub-rules ``fineweb.<rule>``.  A threshold may be a
    per-document array (:func:`.profiles.combined_settings`)."""

    name = "fineweb"
    rules = RULES
    tests = TESTS

    def __init__(self, settings: FineWebSettings) -> None:
        self.settings = settings

    def run(
        self, batch, texts: pa.Array, n_words: np.ndarray, alive: np.ndarray, full: bool = False
    ) -> Verdicts:
        """The registry's entry (:mod:`.registry`): :meth:`evaluate` on ``texts`` (after C4's edits
        when C4 ran before) and their word counts."""
        return self.evaluate(texts, n_words, batch.no_space, alive, full)

    def evaluate(
        self,
        texts: pa.Array,
        n_words: np.ndarray,
        no_space: np.ndarray,
        alive: np.ndarray,
        full: bool = False,
    ) -> Verdicts:
        """``n_words``: words of each text (:mod:`.words`); ``no_space``: texts whose word rule
        is skipped; ``full``: every measure of every document, kept in ``measures``."""
        s = self.settings
        texts = as_strings(texts)
        n = len(texts)
        v = Verdicts(self.name, self.rules, n, alive, full)
        lists = pc.split_pattern(texts, "\n")
        offsets = list_offsets(lists)
        flat = lists.flatten().cast(pa.large_string())
        doc = np.repeat(np.arange(n), np.diff(offsets))
        real = _bools(pc.match_substring_regex(flat, "[^" + WHITESPACE[1:]))
        lines = flat.filter(pa.array(real))
        doc = doc[real]
        n_lines = np.bincount(doc, minlength=n)
        v.measure("fw_lines", n_lines)
        v.measure("fw_words", n_words)
        tests, spaced = self.tests, ~no_space
        v.check("empty", tests["empty"], s)
        if s.min_line_punct_ratio is not None or full:
            last = pc.utf8_slice_codeunits(lines, -1)
            ending = np.bincount(doc[_bools(pc.is_in(last, value_set=_TERMINAL))], minlength=n)
            v.measure("fw_punct_lines", ending)
        if s.min_line_punct_ratio is not None:
            v.check("min_line_punct_ratio", tests["min_line_punct_ratio"], s)
        lengths = pc.utf8_length(lines).to_numpy(zero_copy_only=False).astype(np.int64)
        if s.max_short_line_ratio is not None or full:
            limit = (
                s.short_line_length[doc]
                if isinstance(s.short_line_length, np.ndarray)
                else s.short_line_length
            )
            short = np.bincount(doc[lengths <= limit], minlength=n)
            v.measure("fw_short_lines", short)
        if s.max_short_line_ratio is not None:
            v.check("max_short_line_ratio", tests["max_short_line_ratio"], s)
        newlines = count_literal(texts, "\n")
        v.measure("fw_newlines", newlines)
        if s.max_dup_line_char_ratio is not None or full:
            encoded = pc.dictionary_encode(lines)
            ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            by_id = np.zeros(len(encoded.dictionary), np.int64)
            by_id[ids] = lengths
            dup = duplicates(ids, doc, by_id, n)
            chars = pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.int64) - newlines
            v.measure("fw_dup_line_chars", dup.chars)
            v.measure("fw_chars", chars)
        if s.max_dup_line_char_ratio is not None:
            v.check("max_dup_line_char_ratio", tests["max_dup_line_char_ratio"], s)
        if s.max_newline_word_ratio is not None:
            v.check("max_newline_word_ratio", tests["max_newline_word_ratio"], s, spaced)
        return v


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)
