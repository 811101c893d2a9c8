"""A batch of texts cut once into lines and words, shared by every filter.

Lines are the pieces between ``"\\n"``; the other line breaks that ``str.splitlines()`` knows
(``\\r\\n``, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``) are
read as ``"\\n"`` first, so that every rule sees the same lines (datatrove's filters split lines
three ways: Gopher repetition with ``re.split("\\n+")``, Gopher quality and C4 with
``splitlines()``, FineWeb with ``split("\\n")``; they differ only on those rare characters).
The words of a text are the words of its lines (:mod:`.words` never joins across a line break).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...text.arrays import as_strings, count_literal, list_offsets, ragged_index
from ...text.segment import DEFAULT, split_words_with
from ...text.words import WHITESPACE, Words, no_space_script

_OTHER_LINE_BREAKS = "\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]"


def _ints(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(np.int64)


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)


@dataclass(frozen=True)
class Duplicates:
    """Per text: how many segments (lines, paragraphs) repeat an earlier one, and their characters."""

    count: np.ndarray
    chars: np.ndarray


def duplicates(ids: np.ndarray, doc: np.ndarray, lengths: np.ndarray, n_docs: int) -> Duplicates:
    """Every occurrence after the first of a segment within its text is a duplicate (datatrove's
    ``find_duplicates``); ``ids`` are equal for equal segments.  One sort, no Python loop."""
    if len(ids) == 0:
        zeros = np.zeros(n_docs, np.int64)
        return Duplicates(zeros, zeros.copy())
    span = int(ids.max()) + 1
    keys = np.sort(doc.astype(np.int64) * span + ids)
    repeat = np.flatnonzero(keys[1:] == keys[:-1]) + 1
    repeat_doc = keys[repeat] // span
    repeat_len = lengths[keys[repeat] % span] if lengths.ndim else lengths
    return Duplicates(
        count=np.bincount(repeat_doc, minlength=n_docs).astype(np.int64),
        chars=np.bincount(repeat_doc, weights=repeat_len, minlength=n_docs).astype(np.int64),
    )


class TextBatch:
    """The texts of a batch with their lines and words, computed once and on demand.

    ``line_offsets[i]:line_offsets[i + 1]`` index text ``i``'s lines in the flat line arrays
    (every piece between two ``"\\n"``, empty ones included: ``"a\\n"`` has the lines ``"a"`` and
    ``""``).  Words are cut by ``segmenter`` (:mod:`contentx_udf.text.segment`; the default is
    spaCy's English rules, :mod:`contentx_udf.text.words`).
    """

    def __init__(self, texts, languages=None, detect_no_space: bool = True, segmenter: str = DEFAULT) -> None:
        texts = as_strings(texts)
        odd = _bools(pc.match_substring_regex(texts, _OTHER_LINE_BREAKS))
        if odd.any():
            normalised = pc.replace_substring_regex(texts, _OTHER_LINE_BREAKS, "\n")
            texts = pc.if_else(pa.array(odd), normalised, texts)
        self.texts: pa.Array = texts
        self.n = len(texts)
        self.languages = None if languages is None else as_strings(languages)
        self.detect_no_space = detect_no_space
        self.segmenter = segmenter

    # -- texts -----------------------------------------------------------------------------------

    @cached_property
    def text_lengths(self) -> np.ndarray:
        """Characters (code points) of every text, as ``len(text)``."""
        return _ints(pc.utf8_length(self.texts))

    @cached_property
    def no_space(self) -> np.ndarray:
        """Per text: written in a script without spaces between words (word rules skipped);
        all False when ``detect_no_space`` is off (it may be a per-text array)."""
        detect = np.asarray(self.detect_no_space, bool)
        if not detect.any():
            return np.zeros(self.n, bool)
        return no_space_script(self.texts, self.languages) & detect

    def count(self, substring: str) -> np.ndarray:
        """Per text: non-overlapping occurrences of ``substring`` (``str.count``)."""
        return count_literal(self.texts, substring)

    # -- lines -----------------------------------------------------------------------------------

    @cached_property
    def _line_lists(self) -> pa.ListArray:
        return pc.split_pattern(self.texts, "\n")

    @cached_property
    def lines(self) -> pa.Array:
        """Every line of every text, flat (large_string)."""
        return self._line_lists.flatten().cast(pa.large_string())

    @cached_property
    def line_offsets(self) -> np.ndarray:
        return list_offsets(self._line_lists)

    @cached_property
    def line_doc(self) -> np.ndarray:
        """The text index of every line."""
        return np.repeat(np.arange(self.n), np.diff(self.line_offsets))

    @cached_property
    def line_position(self) -> np.ndarray:
        """The index of every line within its text (0 for the first)."""
        return np.arange(len(self.line_doc)) - self.line_offsets[self.line_doc]

    @cached_property
    def line_lengths(self) -> np.ndarray:
        return _ints(pc.utf8_length(self.lines))

    @cached_property
    def line_ids(self) -> np.ndarray:
        """Equal lines have equal ids (exact, a dictionary over the batch)."""
        return _ints(pc.dictionary_encode(self.lines).indices)

    @cached_property
    def line_blank(self) -> np.ndarray:
        """Per line: empty or only whitespace (``line.strip() == ""``)."""
        return ~_bools(pc.match_substring_regex(self.lines, "[^" + WHITESPACE[1:]))

    @cached_property
    def line_is_last(self) -> np.ndarray:
        return self.line_position == np.diff(self.line_offsets)[self.line_doc] - 1

    # -- words -----------------------------------------------------------------------------------

    @cached_property
    def line_words(self) -> Words:
        """The words of every line (``line_words.offsets`` index lines), by the segmenter."""
        return split_words_with(self.lines, self.segmenter)

    @cached_property
    def word_offsets(self) -> np.ndarray:
        """``word_offsets[i]:word_offsets[i + 1]`` index text ``i``'s words in ``line_words``."""
        return self.line_words.offsets[self.line_offsets]

    @cached_property
    def word_counts(self) -> np.ndarray:
        return np.diff(self.word_offsets)

    def per_text(self, word_values: np.ndarray) -> np.ndarray:
        """Per text: the sum of a per-word quantity (a text's words are contiguous)."""
        total = np.concatenate(([0], np.cumsum(word_values, dtype=np.int64)))
        return total[self.word_offsets[1:]] - total[self.word_offsets[:-1]]

    def words_of(self, docs: np.ndarray) -> np.ndarray:
        """The positions (in the flat word arrays) of the words of the texts ``docs``, in order."""
        return ragged_index(self.word_offsets[docs], self.word_counts[docs])
