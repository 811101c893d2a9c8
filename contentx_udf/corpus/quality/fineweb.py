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
from .verdicts import Verdicts, ratio

RULES = (
    "empty",
    "min_line_punct_ratio",
    "max_short_line_ratio",
    "max_dup_line_char_ratio",
    "max_newline_word_ratio",
)
_TERMINAL = pa.array(sorted(TERMINAL_PUNCTUATION), pa.large_string())


class FineWebQuality:
    """FineWeb's rules (module docstring), sub-rules ``fineweb.<rule>``.  A threshold may be a
    per-document array (:func:`.profiles.combined_settings`)."""

    name = "fineweb"
    rules = RULES

    def __init__(self, settings: FineWebSettings) -> None:
        self.settings = settings

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
        v.fail("empty", n_lines == 0)
        if s.min_line_punct_ratio is not None or full:
            last = pc.utf8_slice_codeunits(lines, -1)
            ending = np.bincount(doc[_bools(pc.is_in(last, value_set=_TERMINAL))], minlength=n)
            v.measure("fw_punct_lines", ending)
        if s.min_line_punct_ratio is not None:
            share = ratio(ending, n_lines)
            low = share < s.min_line_punct_ratio
            low &= ~np.asarray(s.line_punct_exclude_zero, bool) | (share > 0)
            v.fail("min_line_punct_ratio", low)
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
            v.fail("max_short_line_ratio", ratio(short, n_lines) > s.max_short_line_ratio)
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
            v.fail("max_dup_line_char_ratio", ratio(dup.chars, chars) > s.max_dup_line_char_ratio)
        if s.max_newline_word_ratio is not None:
            v.fail(
                "max_newline_word_ratio", ~no_space & (ratio(newlines, n_words) > s.max_newline_word_ratio)
            )
        return v


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)
