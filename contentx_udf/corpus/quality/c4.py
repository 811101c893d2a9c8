"""C4's line and page rules, vectorised over a batch; the line rules edit the text.

Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
Transformer", §2.2, and tensorflow_datasets ``text/c4_utils.py``, as datatrove reproduces them in
``datatrove/pipeline/filters/c4_filters.py`` (``C4QualityFilter``).  Each line of
``text.splitlines()`` is stripped and, in this order:

1. removed if a whitespace-separated word is longer than 1,000 characters;
2. cleared of Wikipedia citation marks (``[1]``, ``[edit]``, ``[citation needed]``);
3. removed if it does not end in ``. ? ! " '`` or ends in ``...`` (only when
   ``terminal_punctuation`` is on: C4 itself; FineWeb turns it off);
4. removed if it has fewer than 3 whitespace-separated words;
5. the page is dropped if the line contains "lorem ipsum" (any case);
6. removed if it contains "javascript" (any case);
7. the page is dropped if the line contains ``{``;
8. removed if it contains a cookie or policy phrase (:data:`POLICY_SUBSTRINGS`);
9. kept, and its sentences counted (spaCy's sentencizer rule: a sentence ends at a terminal
   punctuation mark followed by a word that is not punctuation).

A page whose kept lines hold fewer than 5 sentences is dropped; otherwise its text becomes its
kept lines joined by newlines (and stripped).  For texts in a script without spaces
(:func:`.words.no_space_script`) the word rules 1 and 4 are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...extensions import optional_module
from ...text.arrays import contains_literal, ragged_index
from ...text.words import TERMINAL_PUNCTUATION, WHITESPACE, Words, split_words
from .settings import C4Settings
from .text import TextBatch
from .verdicts import Verdicts


def _too_few_sentences(m, s, spaced) -> np.ndarray:
    need = s.min_sentences
    if need is None or not np.any(np.asarray(need) > 0):
        return np.zeros(1, bool)
    return (np.asarray(need) > 0) & (m["c4_sentences"] < need)


#: C4's page rules, in their order, as tests of the measures (:mod:`.verdicts`): ``c4_page_rule``
#: is the first kept line's page rule (1 lorem ipsum, 2 a curly bracket).
TESTS = {
    "lorem_ipsum": lambda m, s, spaced: m["c4_page_rule"] == 1,
    "curly_bracket": lambda m, s, spaced: m["c4_page_rule"] == 2,
    "min_sentences": _too_few_sentences,
}
RULES = tuple(TESTS)

#: Lines with one of these (lower-cased) are removed (datatrove's ``POLICY_SUBSTRINGS``).
POLICY_SUBSTRINGS = (
    "terms of use",
    "privacy policy",
    "cookie policy",
    "uses cookies",
    "use of cookies",
    "use cookies",
)
#: Wikipedia citation marks (datatrove's ``CITATION_REGEX``, ``\\d`` as Unicode digits).
CITATION = r"\[\p{Nd}*\]|\[edit\]|\[citation needed\]"
#: Line ends that C4's terminal-punctuation rule accepts (datatrove's ``END_PUNCTUATION``).
END_PUNCTUATION = (".", "?", "!", '"', "'")

_SENTENCE_END = pa.array(sorted(TERMINAL_PUNCTUATION), pa.large_string())
#: :func:`.._lines.sentences` (compiled), or None: :func:`_sentences` then counts with numpy
_COMPILED_SENTENCES = getattr(optional_module("contentx_udf.corpus._lines"), "sentences", None)


@dataclass(frozen=True)
class C4Result:
    """The verdicts, and per line of the batch whether C4 kept it and the line as kept (stripped,
    citations removed; ``None`` for lines not kept)."""

    verdicts: Verdicts
    kept: np.ndarray
    kept_lines: pa.Array  # the kept lines, in order (text i's are kept_offsets[i]:kept_offsets[i+1])
    kept_offsets: np.ndarray
    lines_removed: np.ndarray  # per text
    kept_words: np.ndarray  # per text: words of the kept lines (for FineWeb's newline ratio)

    def texts(self) -> pa.Array:
        """The edited texts: kept lines joined by newlines, stripped."""
        lists = pa.LargeListArray.from_arrays(pa.array(self.kept_offsets, pa.int64()), self.kept_lines)
        return pc.utf8_trim_whitespace(pc.binary_join(lists, pa.scalar("\n", pa.large_string())))


class C4Quality:
    """C4's rules (module docstring); the page rules are the sub-rules ``c4.lorem_ipsum``,
    ``c4.curly_bracket``, ``c4.min_sentences``."""

    name = "c4"
    rules = RULES
    tests = TESTS

    def __init__(self, settings: C4Settings) -> None:
        self.settings = settings

    def run(self, batch: TextBatch, texts, n_words, alive: np.ndarray, full: bool = False) -> C4Result:
        """The registry's entry (:mod:`.registry`): :meth:`evaluate` (reads the batch's own texts;
        its result carries the texts it edits)."""
        return self.evaluate(batch, alive, full)

    def evaluate(self, batch: TextBatch, alive: np.ndarray, full: bool = False) -> C4Result:
        """``full``: every measure of every document of ``alive``, kept in ``verdicts.measures``."""
        s = self.settings
        v = Verdicts(self.name, self.rules, batch.n, alive, full)
        # lines as str.splitlines() gives them (a final empty piece is no line), of live texts
        line_alive = alive[batch.line_doc] & ~(batch.line_is_last & (batch.line_lengths == 0))
        index = np.flatnonzero(line_alive)
        doc = batch.line_doc[index]
        spaced = ~batch.no_space[doc]
        raw = batch.lines.take(index)
        line = pc.utf8_trim_whitespace(raw)
        chunks = batch.line_words.chunk_counts[index]
        keep = np.ones(len(index), bool)
        if s.max_word_length is not None:
            keep &= ~(spaced & _has_long_word(raw, batch.line_lengths[index], s.max_word_length))
        changed = np.zeros(len(index), bool)
        if s.citations:
            bracket = contains_literal(line, "[")
            if bracket.any():
                cleaned = pc.replace_substring_regex(line, CITATION, "")
                changed = bracket & _bools(pc.not_equal(cleaned, line))
                line = pc.if_else(pa.array(bracket), cleaned, line)
        if s.terminal_punctuation:
            ends = np.zeros(len(index), bool)
            for mark in END_PUNCTUATION:
                ends |= _bools(pc.ends_with(line, mark))
            keep &= ends & ~_bools(pc.ends_with(line, "..."))
        if s.min_words_per_line is not None:
            keep &= ~(spaced & (chunks < s.min_words_per_line))
        page_rule = np.zeros(len(index), np.int8)  # 1 lorem ipsum, 2 curly bracket
        if s.lorem_ipsum:
            page_rule[keep & _matches(line, "(?i)lorem ipsum")] = 1
        if s.javascript_lines:
            keep &= ~_matches(line, "(?i)javascript")
        if s.curly_bracket:
            curly = keep & (page_rule == 0) & contains_literal(line, "{")
            page_rule[curly] = 2
        if s.policy_lines:
            keep &= ~_matches(line, "(?i)" + "|".join(POLICY_SUBSTRINGS))
        # the first line that drops its page decides the reason (datatrove returns there)
        flagged = np.flatnonzero(page_rule > 0)
        first_rule = np.zeros(batch.n, np.int8)
        if len(flagged):
            first = np.unique(doc[flagged], return_index=True)
            reason = page_rule[flagged[first[1]]]
            first_rule[first[0]] = reason
        v.measure("c4_page_rule", first_rule)
        v.check("lorem_ipsum", self.tests["lorem_ipsum"], s)
        v.check("curly_bracket", self.tests["curly_bracket"], s)
        keep &= page_rule == 0
        # words of the kept lines (a cleaned line is split again; stripping changes no word)
        line_words = batch.line_words.offsets
        words = (line_words[index + 1] - line_words[index]).astype(np.int64)
        recount = np.flatnonzero(changed & keep)
        retokenized: Words | None = None
        if len(recount):
            retokenized = split_words(line.take(recount))
            words[recount] = retokenized.counts
        kept_words = np.bincount(doc[keep], weights=words[keep], minlength=batch.n).astype(np.int64)
        kept_count = np.bincount(doc[keep], minlength=batch.n)
        total = np.bincount(doc, minlength=batch.n)
        v.measure("c4_lines_removed", total - kept_count)
        v.measure("c4_words", kept_words)
        rule_on = s.min_sentences is not None and s.min_sentences > 0
        if v.full or rule_on:
            # in full every sentence of every text; else counted up to the rule's minimum (a text
            # with at least that many kept lines has at least that many sentences)
            need = np.iinfo(np.int64).max if v.full else s.min_sentences
            sentences = self._sentences(batch, index, doc, keep, recount, retokenized, kept_count, need)
            v.measure("c4_sentences", sentences)
        if rule_on:
            v.check("min_sentences", self.tests["min_sentences"], s)
        offsets = np.concatenate(([0], np.cumsum(kept_count)))
        return C4Result(
            verdicts=v,
            kept=keep,
            kept_lines=line.filter(pa.array(keep)),
            kept_offsets=offsets,
            lines_removed=(total - kept_count).astype(np.int64),
            kept_words=kept_words,
        )

    def _sentences(self, batch, index, doc, keep, recount, retokenized, kept_count, need) -> np.ndarray:
        """Per text: the sentences of its kept lines, counted for the texts with fewer kept lines
        than ``need`` (a kept line holds at least one, so the others have at least ``need``:
        their kept lines stand for the count)."""
        out = kept_count.astype(np.int64)  # no kept line at all -> 0 sentences
        check = np.flatnonzero(keep & (kept_count[doc] < need) & (kept_count[doc] > 0))
        if len(check) == 0:
            return out
        line_words = batch.line_words
        sentences = np.zeros(len(index), np.int64)
        if 2 * len(check) > len(line_words.offsets) - 1:  # most lines (full): one pass over all words
            sentences[check] = _sentences(line_words)[index[check]]
        else:
            sentences[check] = _sentences(line_words, index[check])
        if retokenized is not None:  # lines whose citations were removed: count their new words
            again = np.isin(recount, check)
            if again.any():
                local = np.flatnonzero(again)
                sentences[recount[local]] = _sentences(retokenized, local)
        totals = np.bincount(doc[check], weights=sentences[check], minlength=batch.n)
        docs = np.unique(doc[check])
        out[docs] = totals[docs]
        return out


def _sentences(words: Words, texts: np.ndarray | None = None) -> np.ndarray:
    """Sentences of some texts of ``words`` (None: all of them) by spaCy's ``Sentencizer`` rule:
    a word that is not punctuation starts a new sentence when a terminal mark (``.``, ``!``,
    ``?``, ``。``...) came since the previous such word; a text with words has at least one
    sentence.

    Punctuation that is not terminal changes nothing, so among a text's other words a sentence
    starts at each plain word right after a terminal mark: one pass over the words, the
    candidates (a few per text) checked to be in the same text as the mark before them."""
    if texts is None:
        offsets, ids = words.offsets, words.ids
    else:
        counts = np.diff(words.offsets)[texts]
        offsets = np.concatenate(([0], np.cumsum(counts)))
        ids = words.ids[ragged_index(words.offsets[texts], counts)]
    kinds = _word_kinds(words.vocabulary)
    if _COMPILED_SENTENCES is not None:
        return _COMPILED_SENTENCES(kinds, np.ascontiguousarray(ids, np.int64), offsets.astype(np.int64))
    kind = kinds[ids]
    at = np.flatnonzero(kind)  # the plain words and the terminal marks
    kind = kind[at]
    start = np.flatnonzero((kind[1:] == _PLAIN) & (kind[:-1] == _TERMINAL)) + 1
    text = np.searchsorted(offsets, at[start], side="right") - 1
    same = at[start - 1] >= offsets[text]
    n_texts = len(offsets) - 1
    breaks = np.bincount(text[same], minlength=n_texts)
    return np.where(np.diff(offsets) > 0, 1 + breaks, 0)


_TERMINAL, _PLAIN = 1, 2


def _word_kinds(vocabulary: pa.Array) -> np.ndarray:
    """Per distinct word: :data:`_TERMINAL` (a terminal mark), :data:`_PLAIN` (not only
    punctuation) or 0 (other punctuation), as int8."""
    terminal = _bools(pc.is_in(vocabulary, value_set=_SENTENCE_END))
    punctuation = _matches(vocabulary, r"^\pP+$")
    return np.where(terminal, _TERMINAL, np.where(punctuation, 0, _PLAIN)).astype(np.int8)


def _has_long_word(lines: pa.Array, lengths: np.ndarray, limit: int) -> np.ndarray:
    """Per line: a whitespace-separated word longer than ``limit`` (only lines longer than the
    limit can have one; they are checked one by one)."""
    out = np.zeros(len(lines), bool)
    for i in np.flatnonzero(lengths > limit).tolist():
        out[i] = any(len(word) > limit for word in lines[i].as_py().split())
    return out


def _matches(strings: pa.Array, pattern: str) -> np.ndarray:
    return _bools(pc.match_substring_regex(strings, pattern))


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)


__all__ = ["C4Quality", "C4Result", "CITATION", "POLICY_SUBSTRINGS", "WHITESPACE"]
