"""Gopher's quality and repetition filters (MassiveText), vectorised over a batch.

Rae et al. 2021, "Scaling Language Models: Methods, Analysis & Insights from Training Gopher",
§A.1.1 (quality) and Table A1 (repetition thresholds), as datatrove reproduces them in
``datatrove/pipeline/filters/gopher_quality_filter.py`` and ``gopher_repetition_filter.py``
(the FineWeb pipeline's implementation; same rule order, same ratios, same denominators).

Words are :mod:`.words`' words; texts in a script without spaces (:func:`.words.no_space_script`)
skip the word rules: Gopher quality keeps only its line rules (bullets, ellipsis lines) and
Gopher repetition only its line and paragraph rules.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...extensions import optional_module
from ...text.arrays import contains_literal
from ...text.words import WHITESPACE
from .settings import GopherQualitySettings, GopherRepetitionSettings
from .text import TextBatch, duplicates
from .verdicts import Verdicts, over, ratio, under

# --- Gopher repetition -------------------------------------------------------------------------


def _top_gram(n: int):
    return lambda m, s, spaced: over(
        ratio(m[f"gr_top_{n}_gram_chars"], m["gr_chars"]), getattr(s, f"top_{n}_gram_frac")
    )


def _dup_gram(n: int):
    return lambda m, s, spaced: over(
        ratio(m[f"gr_dup_{n}_gram_chars"], m["gr_chars"]), getattr(s, f"dup_{n}_gram_frac")
    )


#: Each rule of Gopher repetition, in its order, as a test of the measures (:mod:`.verdicts`).
REPETITION_TESTS = {
    "empty": lambda m, s, spaced: m["gr_chars"] == 0,
    "dup_para_frac": lambda m, s, spaced: over(
        ratio(m["gr_dup_paragraphs"], m["gr_paragraphs"]), s.dup_para_frac
    ),
    "dup_para_char_frac": lambda m, s, spaced: over(
        ratio(m["gr_dup_paragraph_chars"], m["gr_chars"]), s.dup_para_char_frac
    ),
    "dup_line_frac": lambda m, s, spaced: over(ratio(m["gr_dup_lines"], m["gr_lines"]), s.dup_line_frac),
    "dup_line_char_frac": lambda m, s, spaced: over(
        ratio(m["gr_dup_line_chars"], m["gr_chars"]), s.dup_line_char_frac
    ),
    **{f"top_{n}_gram_frac": _top_gram(n) for n in (2, 3, 4)},
    **{f"dup_{n}_gram_frac": _dup_gram(n) for n in range(5, 11)},
}
REPETITION_RULES = tuple(REPETITION_TESTS)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: :func:`.._lines.greedy_repeats` (compiled), or None: the exact scan then runs in Python
_COMPILED_GREEDY = getattr(optional_module("contentx_udf.corpus._lines"), "greedy_repeats", None)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a well-spread 64-bit hash of each value."""
    x = x.astype(np.uint64) + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class _NGrams:
    """The word n-grams of some texts at the positions that can still matter, each with a 64-bit
    identity (equal n-grams, equal identities).

    ``pos`` are word positions in the flat word arrays of the texts (a text's words are
    contiguous) whose n-gram lies inside the text.  :meth:`runs` sorts them into groups of equal
    n-grams; :meth:`keep_repeated` keeps the groups of two or more, the only places where a longer
    n-gram can repeat; :meth:`advance` goes from n to n + 1 (an (n+1)-gram is an n-gram and the
    next word, so its identity is computed from the n-gram's, in any order of positions)."""

    def __init__(
        self, word_hash: np.ndarray, word_doc: np.ndarray, remaining: np.ndarray, cum_len: np.ndarray
    ):
        self.word_hash, self.word_doc, self.remaining, self.cum_len = word_hash, word_doc, remaining, cum_len
        self.n = 1
        self.pos = np.arange(len(word_hash), dtype=np.int64)
        self.ident = word_hash
        self.bits = max(1, int(len(word_hash)).bit_length())
        self.mask = np.uint64((1 << self.bits) - 1)

    def advance(self) -> None:
        """From n-grams to (n+1)-grams (positions whose text has n+1 words from there)."""
        fits = self.remaining[self.pos] > self.n
        pos = self.pos[fits]
        ident = self.ident[fits]
        ident *= np.uint64(0x9E3779B97F4A7C15)
        ident += self.word_hash[pos + self.n]
        self.pos, self.ident = pos, ident
        self.n += 1

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Sort the positions into groups of equal n-grams of a text; within a group positions
        ascend (the first is the first occurrence).  Returns ``(group start flags, group of
        each)``; ``pos`` is left in that order."""
        keys = self.ident & ~self.mask
        keys |= self.pos.view(np.uint64)
        keys.sort()
        self.pos = (keys & self.mask).view(np.int64)
        self.ident = keys >> np.uint64(self.bits)
        start = np.empty(len(keys), bool)
        start[:1] = True
        np.not_equal(self.ident[1:], self.ident[:-1], out=start[1:])
        # an n-gram shared by two texts: split its group where the text changes
        same = np.flatnonzero(~start[1:])
        other_text = self.word_doc[self.pos[same]] != self.word_doc[self.pos[same + 1]]
        start[same[other_text] + 1] = True
        return start, np.cumsum(start) - 1

    def keep_repeated(self, group: np.ndarray, alive: np.ndarray) -> None:
        """Keep the positions of n-grams that occur twice or more in a text still alive."""
        selected = np.bincount(group)[group] >= 2
        pos = self.pos[selected]
        keep = alive[self.word_doc[pos]]
        self.pos, self.ident = pos[keep], self.ident[selected][keep]

    def chars(self, pos: np.ndarray, n: int | None = None) -> np.ndarray:
        """Characters of the n words from each position (no spaces)."""
        n = self.n if n is None else n
        return self.cum_len[pos + n] - self.cum_len[pos]


class GopherRepetition:
    """Drops documents made of repeated lines, paragraphs or word n-grams (Rae et al. 2021,
    Table A1; datatrove ``GopherRepetitionFilter``): duplicate paragraphs and lines by count
    (0.3 / 0.3) and by characters (0.2 / 0.2), over ``len(text)``; the characters of the most
    frequent 2-, 3-, 4-gram (words joined by spaces, times its count: 0.20 / 0.18 / 0.16); the
    characters of repeated 5- to 10-grams (words joined without spaces; 0.15 down to 0.10),
    counted greedily from the start as datatrove's ``find_all_duplicate`` does."""

    name = "gopher_repetition"
    rules = REPETITION_RULES
    tests = REPETITION_TESTS

    def __init__(self, settings: GopherRepetitionSettings) -> None:
        self.settings = settings

    def run(self, batch: TextBatch, texts, n_words, alive: np.ndarray, full: bool = False) -> Verdicts:
        """The registry's entry (:mod:`.registry`): :meth:`evaluate` (reads the batch's own texts)."""
        return self.evaluate(batch, alive, full)

    def evaluate(self, batch: TextBatch, alive: np.ndarray, full: bool = False) -> Verdicts:
        """``full``: every measure of every document of ``alive``, kept in ``measures``."""
        s = self.settings
        v = Verdicts(self.name, self.rules, batch.n, alive, full)
        text_len = batch.text_lengths
        v.measure("gr_chars", text_len)
        v.check("empty", self.tests["empty"], s)
        self._paragraphs(batch, v, text_len)
        # lines: re.split("\n+", text): the empty lines inside a text vanish, at its ends they stay
        keep = (batch.line_lengths > 0) | (batch.line_position == 0) | batch.line_is_last
        lines = np.flatnonzero(keep)
        doc = batch.line_doc[lines]
        dup = duplicates(
            batch.line_ids[lines], doc, _value_by_id(batch.line_ids, batch.line_lengths), batch.n
        )
        n_lines = np.bincount(doc, minlength=batch.n)
        v.measure("gr_lines", n_lines)
        v.measure("gr_dup_lines", dup.count)
        v.measure("gr_dup_line_chars", dup.chars)
        if s.dup_line_frac is not None:
            v.check("dup_line_frac", self.tests["dup_line_frac"], s)
        if s.dup_line_char_frac is not None:
            v.check("dup_line_char_frac", self.tests["dup_line_char_frac"], s)
        self._ngrams(batch, v, text_len)
        return v

    def _paragraphs(self, batch: TextBatch, v: Verdicts, text_len: np.ndarray) -> None:
        """re.split(r"\\n{2,}", text.strip()): only texts with a blank line have more than one."""
        s = self.settings
        if s.dup_para_frac is None and s.dup_para_char_frac is None and not v.full:
            return
        stripped = pc.utf8_trim_whitespace(batch.texts)
        several = v.alive & contains_literal(stripped, "\n\n")
        if v.full:
            v.measure("gr_paragraphs", np.ones(batch.n, np.int64))
            v.measure("gr_dup_paragraphs", np.zeros(batch.n, np.int64))
            v.measure("gr_dup_paragraph_chars", np.zeros(batch.n, np.int64))
        if not several.any():
            return
        docs = np.flatnonzero(several)
        parts = pc.split_pattern_regex(stripped.take(docs), r"\n{2,}")
        offsets = parts.offsets.to_numpy().astype(np.int64)
        flat = parts.flatten()
        encoded = pc.dictionary_encode(flat)
        ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        lengths = pc.utf8_length(encoded.dictionary).to_numpy(zero_copy_only=False).astype(np.int64)
        local_doc = np.repeat(np.arange(len(docs)), np.diff(offsets))
        dup = duplicates(ids, local_doc, lengths, len(docs))
        count = np.zeros(batch.n)
        chars = np.zeros(batch.n)
        n_paragraphs = np.ones(batch.n)
        count[docs], chars[docs], n_paragraphs[docs] = dup.count, dup.chars, np.diff(offsets)
        v.measure("gr_paragraphs", n_paragraphs)
        v.measure("gr_dup_paragraphs", count)
        v.measure("gr_dup_paragraph_chars", chars)
        if s.dup_para_frac is not None:
            v.check("dup_para_frac", self.tests["dup_para_frac"], s)
        if s.dup_para_char_frac is not None:
            v.check("dup_para_char_frac", self.tests["dup_para_char_frac"], s)

    def _ngrams(self, batch: TextBatch, v: Verdicts, text_len: np.ndarray) -> None:
        s = self.settings
        top = [(n, getattr(s, f"top_{n}_gram_frac")) for n in (2, 3, 4)]
        dup = [(n, getattr(s, f"dup_{n}_gram_frac")) for n in range(5, 11)]
        if v.full:
            for n, _ in top:
                v.measure(f"gr_top_{n}_gram_chars", np.zeros(batch.n, np.int64))
            for n, _ in dup:
                v.measure(f"gr_dup_{n}_gram_chars", np.zeros(batch.n, np.int64))
        elif all(frac is None for _, frac in top + dup):
            return
        docs = np.flatnonzero(v.alive & ~batch.no_space)
        if len(docs) == 0:
            return
        word_ids = batch.line_words.ids[batch.words_of(docs)]
        counts = batch.word_counts[docs]
        word_doc = np.repeat(docs, counts)
        doc_end = np.zeros(batch.n, np.int64)
        doc_end[docs] = np.cumsum(counts)
        doc_start = doc_end.copy()
        doc_start[docs] -= counts
        remaining = doc_end[word_doc] - np.arange(len(word_doc))
        lengths = batch.line_words.vocabulary_lengths[word_ids]
        grams = _NGrams(_mix(word_ids), word_doc, remaining, np.concatenate(([0], np.cumsum(lengths))))
        for n, frac in top:
            grams.advance()
            start, group = grams.runs()
            if frac is not None or v.full:
                top_chars = _top_chars(grams, start, group, doc_start, doc_end, batch.n)
                v.measure(f"gr_top_{n}_gram_chars", top_chars)
                if frac is not None:
                    v.check(f"top_{n}_gram_frac", self.tests[f"top_{n}_gram_frac"], s)
            grams.keep_repeated(group, v.alive)
        for n, frac in dup:
            while grams.n < n:
                grams.advance()
            start, group = grams.runs()
            if frac is not None or v.full:
                # measured in full: exact (no early stop), so any threshold reads it
                limit = None if v.full else frac
                repeated = _greedy_repeated_chars(grams, start, group, text_len, limit, v.alive, batch.n)
                v.measure(f"gr_dup_{n}_gram_chars", repeated)
                if frac is not None:
                    v.check(f"dup_{n}_gram_frac", self.tests[f"dup_{n}_gram_frac"], s)
            grams.keep_repeated(group, v.alive)
            if len(grams.pos) == 0:
                break


def _value_by_id(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per id, the value of (any) segment with that id (equal segments have equal values)."""
    out = np.zeros(int(ids.max()) + 1 if len(ids) else 0, values.dtype)
    out[ids] = values
    return out


def _top_chars(grams: _NGrams, start, group, doc_start, doc_end, n_docs) -> np.ndarray:
    """Per text: characters of its most frequent n-gram (words joined by spaces) times its
    count; ties go to the n-gram seen first (``Counter.most_common``); a text without a repeated
    n-gram scores its first n-gram once; a text with fewer than n words scores 0."""
    n, bits, mask = grams.n, grams.bits, int(grams.mask)
    size = np.bincount(group)
    first = grams.pos[start]
    repeated = size >= 2
    first, size = first[repeated], size[repeated]
    score = (size.astype(np.int64) << bits) | (mask - first)
    best = np.full(n_docs, -1, np.int64)
    np.maximum.at(best, grams.word_doc[first], score)
    out = np.zeros(n_docs)
    has = best >= 0
    best_pos = mask - (best[has] & mask)
    out[has] = (best[has] >> bits) * (grams.chars(best_pos) + n - 1)
    single = ~has & (doc_end - doc_start >= n)
    out[single] = grams.chars(doc_start[single]) + n - 1
    return out


def _greedy_repeated_chars(grams: _NGrams, start, group, text_len, frac, alive, n_docs) -> np.ndarray:
    """Per text: characters of repeated n-grams counted as datatrove's ``find_all_duplicate``
    does (scan from the start; a repeat counts its characters and skips its n words).

    The union of all repeats' words bounds it from above and settles almost every text at no
    cost; only texts above the threshold by that bound are scanned exactly, over their repeated
    n-grams only (one step per repeated occurrence, never per word: compiled,
    :func:`.._lines.greedy_repeats`, or in Python without the extension).  ``frac`` None: every
    text with a repeat is scanned to its end (the exact count, for the signals)."""
    n, pos = grams.n, grams.pos
    rep_pos = np.sort(pos[~start])
    out = np.zeros(n_docs)
    if len(rep_pos) == 0:
        return out
    doc = grams.word_doc[rep_pos]
    nxt = np.empty_like(rep_pos)
    nxt[:-1] = rep_pos[1:]
    nxt[-1] = np.iinfo(np.int64).max
    last_of_doc = np.ones(len(rep_pos), bool)
    last_of_doc[:-1] = doc[1:] != doc[:-1]
    end = np.where(last_of_doc, rep_pos + n, np.minimum(rep_pos + n, nxt))
    covered = grams.cum_len[end] - grams.cum_len[rep_pos]
    bound = np.bincount(doc, weights=covered, minlength=n_docs)
    exact = frac is None
    suspects = np.flatnonzero(alive & (bound > (0 if exact else frac) * text_len))
    out[:] = bound
    if len(suspects) == 0:
        return out
    # exact scan of the suspects over their repeated n-grams (positions of groups of size >= 2)
    size = np.bincount(group)
    group_pos = pos[size[group] >= 2]
    group_id = group[size[group] >= 2]
    order = np.argsort(group_pos, kind="stable")
    group_pos, group_id = group_pos[order], group_id[order]
    group_doc = grams.word_doc[group_pos]
    bounds = np.searchsorted(group_doc, suspects), np.searchsorted(group_doc, suspects, side="right")
    limits = np.full(n_docs, np.inf) if exact else frac * text_len
    if _COMPILED_GREEDY is not None:
        out[suspects] = _COMPILED_GREEDY(
            np.ascontiguousarray(group_pos, np.int64),
            np.ascontiguousarray(group_id, np.int64),
            np.ascontiguousarray(grams.cum_len, np.int64),
            bounds[0].astype(np.int64),
            bounds[1].astype(np.int64),
            np.ascontiguousarray(np.broadcast_to(limits, (n_docs,))[suspects], np.float64),
            n,
            int(group_id.max()) + 1 if len(group_id) else 0,
        )
        return out
    for doc_index, lo, hi in zip(suspects.tolist(), bounds[0].tolist(), bounds[1].tolist(), strict=True):
        limit = limits[doc_index]
        seen: set[int] = set()
        next_free = -1
        total = 0
        for p, g in zip(group_pos[lo:hi].tolist(), group_id[lo:hi].tolist(), strict=True):
            if p < next_free:
                continue
            if g in seen:
                total += int(grams.cum_len[p + n] - grams.cum_len[p])
                next_free = p + n
                if total > limit:
                    break
            else:
                seen.add(g)
        out[doc_index] = total
    return out


# --- Gopher quality ----------------------------------------------------------------------------


def _mean_word_length(m) -> np.ndarray:
    return ratio(m["gq_real_word_chars"], m["gq_real_words"])


#: Each rule of Gopher quality, in its order, as a test of the measures (:mod:`.verdicts`); the
#: word rules apply to ``spaced`` documents only.
QUALITY_TESTS = {
    "min_words": lambda m, s, spaced: spaced & under(m["gq_real_words"], s.min_words),
    "max_words": lambda m, s, spaced: spaced & over(m["gq_real_words"], s.max_words),
    "min_mean_word_length": lambda m, s, spaced: spaced & under(_mean_word_length(m), s.min_mean_word_length),
    "max_mean_word_length": lambda m, s, spaced: spaced & over(_mean_word_length(m), s.max_mean_word_length),
    "max_hash_word_ratio": lambda m, s, spaced: (
        spaced & over(ratio(m["gq_hashes"], m["gq_words"]), s.max_hash_word_ratio)
    ),
    "max_ellipsis_word_ratio": lambda m, s, spaced: (
        spaced & over(ratio(m["gq_ellipses"], m["gq_words"]), s.max_ellipsis_word_ratio)
    ),
    "max_bullet_lines_ratio": lambda m, s, spaced: over(
        ratio(m["gq_bullet_lines"], m["gq_lines"]), s.max_bullet_lines_ratio
    ),
    "max_ellipsis_lines_ratio": lambda m, s, spaced: over(
        ratio(m["gq_ellipsis_lines"], m["gq_lines"]), s.max_ellipsis_lines_ratio
    ),
    "min_alpha_words_ratio": lambda m, s, spaced: (
        spaced & under(ratio(m["gq_alpha_words"], m["gq_words"]), s.min_alpha_words_ratio)
    ),
    "min_stop_words": lambda m, s, spaced: (
        spaced & (m["gq_stop_words"] >= 0) & under(m["gq_stop_words"], s.min_stop_words)
    ),
}
QUALITY_RULES = tuple(QUALITY_TESTS)


class GopherQuality:
    """Drops documents that do not look like prose (Rae et al. 2021, §A.1.1; datatrove
    ``GopherQualityFilter``), in this order: 50-100,000 words that are not only punctuation;
    their mean length 3-10 characters; at most 0.1 ``#`` and 0.1 ellipses (``...``, ``…``) per
    word; at most 90 % of lines starting with a bullet (``•`` or ``-``) and 30 % ending in an
    ellipsis; at least 80 % of words holding a letter; at least 2 distinct stop words of the
    text's language (English: Gopher's the, be, to, of, and, that, have, with; a language without
    a list skips the rule).  "Per word" and "of words" count every word, punctuation included,
    as datatrove does."""

    name = "gopher_quality"
    rules = QUALITY_RULES
    tests = QUALITY_TESTS

    def __init__(self, settings: GopherQualitySettings) -> None:
        self.settings = settings

    def run(self, batch: TextBatch, texts, n_words, alive: np.ndarray, full: bool = False) -> Verdicts:
        """The registry's entry (:mod:`.registry`): :meth:`evaluate` (reads the batch's own texts)."""
        return self.evaluate(batch, alive, full)

    def evaluate(self, batch: TextBatch, alive: np.ndarray, full: bool = False) -> Verdicts:
        """``full``: every measure of every document of ``alive``, kept in ``measures``."""
        s = self.settings
        v = Verdicts(self.name, self.rules, batch.n, alive, full)
        words = batch.line_words
        spaced = ~batch.no_space
        n_words = batch.word_counts.astype(float)
        real = ~words.is_symbol
        n_real = batch.per_text(real)
        real_chars = batch.per_text(np.where(real, words.lengths, 0))
        v.measure("no_space", batch.no_space)
        v.measure("gq_words", n_words)
        v.measure("gq_real_words", n_real)
        v.measure("gq_real_word_chars", real_chars)
        tests = self.tests
        for rule in ("min_words", "max_words", "min_mean_word_length", "max_mean_word_length"):
            if getattr(s, rule) is not None:
                v.check(rule, tests[rule], s, spaced)
        if s.max_hash_word_ratio is not None or v.full:
            v.measure("gq_hashes", batch.count("#"))
        if s.max_hash_word_ratio is not None:
            v.check("max_hash_word_ratio", tests["max_hash_word_ratio"], s, spaced)
        if s.max_ellipsis_word_ratio is not None or v.full:
            v.measure("gq_ellipses", batch.count("...") + batch.count("…"))
        if s.max_ellipsis_word_ratio is not None:
            v.check("max_ellipsis_word_ratio", tests["max_ellipsis_word_ratio"], s, spaced)
        if s.max_bullet_lines_ratio is not None or s.max_ellipsis_lines_ratio is not None or v.full:
            self._line_rules(batch, v)
        if s.min_alpha_words_ratio is not None or v.full:
            alpha = batch.per_text(words.has_letter)
            v.measure("gq_alpha_words", alpha)
        if s.min_alpha_words_ratio is not None:
            v.check("min_alpha_words_ratio", tests["min_alpha_words_ratio"], s, spaced)
        if s.min_stop_words is not None or v.full:
            v.measure("gq_stop_words", self._stop_words(batch))
        if s.min_stop_words is not None:
            v.check("min_stop_words", tests["min_stop_words"], s, spaced)
        return v

    def _line_rules(self, batch: TextBatch, v: Verdicts) -> None:
        """Lines as ``str.splitlines()`` gives them: a text's final empty piece is no line."""
        s = self.settings
        counted = ~(batch.line_is_last & (batch.line_lengths == 0))
        n_lines = np.bincount(batch.line_doc[counted], minlength=batch.n)
        v.measure("gq_lines", n_lines)
        lines = batch.lines
        if s.max_bullet_lines_ratio is not None or v.full:
            bullet = _bools(pc.match_substring_regex(lines, "^" + WHITESPACE + r"*[•\-]"))
            bullets = np.bincount(batch.line_doc[bullet & counted], minlength=batch.n)
            v.measure("gq_bullet_lines", bullets)
            if s.max_bullet_lines_ratio is not None:
                v.check("max_bullet_lines_ratio", self.tests["max_bullet_lines_ratio"], s)
        if s.max_ellipsis_lines_ratio is not None or v.full:
            ending = _bools(pc.match_substring_regex(lines, r"(?:\.\.\.|…)" + WHITESPACE + "*$"))
            ellipsis = np.bincount(batch.line_doc[ending & counted], minlength=batch.n)
            v.measure("gq_ellipsis_lines", ellipsis)
            if s.max_ellipsis_lines_ratio is not None:
                v.check("max_ellipsis_lines_ratio", self.tests["max_ellipsis_lines_ratio"], s)

    def _stop_words(self, batch: TextBatch) -> np.ndarray:
        """Per text: the distinct stop words of its language, -1 when its language has no list
        (such a text never fails).  Every language of the batch at once: a word occurrence is a
        stop word when the pair (word, its text's language) is in the table."""
        s = self.settings
        out = np.full(batch.n, -1, np.int64)
        table = [(language, words) for language, words in s.stop_words if words]
        if not table:
            return out
        languages = pa.array(["en"] * batch.n) if batch.languages is None else batch.languages
        doc_language = pc.fill_null(
            pc.index_in(languages, value_set=pa.array([language for language, _ in table], languages.type)),
            -1,
        )
        doc_language = doc_language.to_numpy(zero_copy_only=False).astype(np.int64)
        docs = np.flatnonzero(doc_language >= 0)
        if len(docs) == 0:
            return out
        vocabulary = list(dict.fromkeys(w for _, words in table for w in words))
        position = {w: i for i, w in enumerate(vocabulary)}
        n_languages = len(table)
        pairs = np.unique(
            [position[w] * n_languages + k for k, (_, words) in enumerate(table) for w in words]
        )
        words = batch.words_of(docs)
        index = batch.line_words.vocabulary_index(vocabulary)[words]
        local = np.repeat(np.arange(len(docs)), batch.word_counts[docs])
        hit = index >= 0
        local, index = local[hit], index[hit]
        stop = np.isin(index * n_languages + doc_language[docs][local], pairs)
        found = np.unique(local[stop] * len(vocabulary) + index[stop])
        out[docs] = np.bincount(found // len(vocabulary), minlength=len(docs))
        return out


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)
