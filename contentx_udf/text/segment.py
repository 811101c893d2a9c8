"""Word segmentation for every script: one entry point, a rule per language.

API shared by the filters (``corpus/quality``) and near dedup (``corpus/minhash``):

* :func:`segmenter_for` -- the segmenter name of a FineWeb-2 language key (``iso639-3_Script``,
  e.g. ``deu_Latn``, ``cmn_Hani``) or None (today's splitter);
* :func:`split_words_with` -- the words of a batch of strings by one segmenter, as
  :class:`~contentx_udf.text.words.Words`;
* :func:`spaced_for_minhash` -- texts with a space inserted between the dictionary words of runs
  in scripts written without spaces, so that near dedup's byte-level word split sees words.

**Reference.** datatrove's per-language word tokenizers
(``datatrove/utils/word_tokenizers.py``, ``assets/tokenizer_assignment.csv``), which FineWeb-2's
thresholds and stop words were computed with: spaCy ``blank(lang)`` for most languages, jieba
(zh), SudachiPy (ja), pythainlp (th), Kiwi (ko), khmer-nltk, laonlp, botok (bo), IndicNLP.  Here:

* **Spaced scripts** (``spaces``): :func:`.words.split_words` (spaCy's blank English rules),
  then the language's rewrites of :data:`REWRITES` (one table), applied once per distinct word of
  the batch: French, Italian and Catalan elisions (``l'homme`` -> ``l'`` ``homme``, as spaCy fr/it/ca
  split them; FineWeb-2's French stop words hold ``l'`` and ``d'``), Korean particles and endings.
* **Scripts without spaces** (``icu``): runs of Han, kana, Thai, Lao, Khmer and Myanmar
  characters are cut into words by ICU's word BreakIterator (its dictionaries: CJK, Thai, Lao,
  Khmer, Burmese; PyPI ``pyicu-wheels``), one iterator over the concatenated runs of the batch; a
  space is inserted at every boundary and the spaced text goes through :func:`.words.split_words`.
  Tibetan (no ICU dictionary) is cut into syllables after every tsheg (``་``), botok's unit.

``chunk_counts`` stays ``len(text.split())`` of the original text (C4 counts ``line.split()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UserError
from .arrays import as_strings, ragged_index, replace_at, split_on, split_whitespace, string_offsets
from .words import Words, split_words

#: Today's splitter: spaCy's blank English tokenizer rules (:mod:`.words`).
DEFAULT = "spaces"
#: ICU's dictionary word break inside runs of scripts without spaces, then :data:`DEFAULT`.
ICU = "icu"

#: Characters of the scripts written without spaces between words (RE2), and the marks used
#: inside their words although their script property is Common (prolonged sound mark, voicing
#: marks, iteration marks).
NO_SPACE_CLASS = (
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}"
    r"\x{3005}\x{303B}\x{309B}\x{309C}\x{30FC}\x{FF70}\x{FF9E}\x{FF9F}]"
)
_TIBETAN = r"\p{Tibetan}"
#: Code points of whitespace (``str.isspace``): no space is added beside them.
_WHITESPACE_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], np.uint32)
#: Tibetan: a syllable ends at its tsheg; shad and other marks are words of their own.
_TIBETAN_PASSES = (
    (r"([\x{0F0B}\x{0F0C}])(\p{Tibetan})", r"\1 \2"),
    (r"([\x{0F04}-\x{0F0A}\x{0F0D}-\x{0F14}])", r" \1 "),
)


@dataclass(frozen=True)
class Rewrite:
    """A rewrite of single words into several: words matching ``pattern`` (RE2) become the
    space-separated pieces of ``replacement`` (``\\1`` ...)."""

    pattern: str
    replacement: str


_ELISION = r"(?i)^((?:{})['’])(\pL.*)$"
#: Words split further per language (ISO 639-1 or -3 code): spaCy fr / it / ca split an elided
#: article or pronoun from the next word (``l'homme``, ``dell'uomo``, ``d'una``).
REWRITES: dict[str, tuple[Rewrite, ...]] = {
    "fr": (Rewrite(_ELISION.format("l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu|presqu"), r"\1 \2"),),
    "it": (
        Rewrite(
            _ELISION.format(
                "l|d|c|s|m|t|v|n|un|all|dall|dell|nell|sull|coll|pell|quell|quest|com|dov|cos|tutt|anch"
            ),
            r"\1 \2",
        ),
    ),
    "ca": (Rewrite(_ELISION.format("l|d|m|n|s|t"), r"\1 \2"),),
}

#: FineWeb-2 key (``iso639-3_Script``), ISO 639-3 code, or script -> segmenter.
SEGMENTER_OF_SCRIPT = {
    "Hani": ICU,
    "Hans": ICU,
    "Hant": ICU,
    "Jpan": ICU,
    "Hira": ICU,
    "Kana": ICU,
    "Thai": ICU,
    "Laoo": ICU,
    "Khmr": ICU,
    "Mymr": ICU,
    "Tibt": ICU,
}
#: ISO 639-3 -> ISO 639-1 of the languages with rewrites.
_LANGUAGE_CODES = {"fra": "fr", "ita": "it", "cat": "ca"}


def segmenter_for(key: str | None) -> str:
    """The segmenter of a FineWeb-2 language key (``deu_Latn``, ``cmn_Hani``) or of None:
    ``icu`` for scripts without spaces, else ``spaces`` or ``spaces:<lang>`` when the language
    has rewrites (:data:`REWRITES`)."""
    if not key:
        return DEFAULT
    language, _, script = key.partition("_")
    if SEGMENTER_OF_SCRIPT.get(script) is not None:
        return SEGMENTER_OF_SCRIPT[script]
    code = _LANGUAGE_CODES.get(language, language)
    if code in REWRITES:
        return f"{DEFAULT}:{code}"
    return DEFAULT


def split_words_with(texts: Sequence[str] | pa.Array, segmenter: str = DEFAULT) -> Words:
    """The words of every string of ``texts`` (no nulls) by ``segmenter``."""
    texts = as_strings(texts)
    base, _, language = segmenter.partition(":")
    if base not in (DEFAULT, ICU) or (language and language not in REWRITES):
        known = [DEFAULT, ICU] + [f"{DEFAULT}:{code}" for code in REWRITES]
        raise ValueError(f"unknown segmenter {segmenter!r}; known: {', '.join(known)}")
    if base == ICU:
        words = split_words(spaced_for_minhash(texts))
        chunks = np.diff(split_whitespace(texts)[1]) if len(texts) else np.zeros(0, np.int64)
        words = Words(words.offsets, words.ids, words.vocabulary, chunks.astype(np.int64))
    else:
        words = split_words(texts)
    for rewrite in REWRITES.get(language, ()):
        words = _rewrite(words, rewrite)
    return words


def _rewrite(words: Words, rewrite: Rewrite) -> Words:
    """``words`` with every word matching ``rewrite.pattern`` replaced by the pieces of its
    replacement: once per distinct word, then the word ids are expanded."""
    vocabulary = words.vocabulary.cast(pa.large_string())
    hit = pc.match_substring_regex(vocabulary, rewrite.pattern).to_numpy(zero_copy_only=False)
    if not hit.any():
        return words
    where = np.flatnonzero(hit)
    spaced = pc.replace_substring_regex(vocabulary.take(where), rewrite.pattern, rewrite.replacement)
    pieces, piece_offsets = split_on(spaced, " ")
    # every vocabulary entry -> its run of entries in `vocabulary + pieces`
    n = len(vocabulary)
    counts = np.ones(n, np.int64)
    counts[where] = np.diff(piece_offsets)
    starts = np.arange(n, dtype=np.int64)
    starts[where] = n + piece_offsets[:-1]
    entries = pc.dictionary_encode(pa.concat_arrays([vocabulary, pieces.cast(pa.large_string())]))
    entry_ids = entries.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    word_counts = counts[words.ids]
    ids = entry_ids[ragged_index(starts[words.ids], word_counts)]
    ends = np.concatenate(([0], np.cumsum(word_counts)))
    return Words(ends[words.offsets], ids, entries.dictionary, words.chunk_counts)


# --- scripts without spaces ---------------------------------------------------------------------


def spaced_for_minhash(texts: pa.Array) -> pa.Array:
    """``texts`` with a space at every word boundary inside runs of Han, kana, Thai, Lao, Khmer,
    Myanmar and Tibetan characters, and where such a run meets other characters; texts without
    those characters come back unchanged (byte-identical; one regex test per batch)."""
    strings = as_strings(texts)
    if len(strings) == 0:
        return texts
    some = pc.match_substring_regex(pc.fill_null(strings, ""), NO_SPACE_CLASS)
    index = np.flatnonzero(some.to_numpy(zero_copy_only=False))
    if len(index) == 0:
        return texts
    subset = strings.take(index)
    tibetan = pc.match_substring_regex(subset, _TIBETAN).to_numpy(zero_copy_only=False)
    spaced = _insert_spaces(subset, _boundaries(subset))
    if tibetan.any():
        where = np.flatnonzero(tibetan)
        cut = spaced.take(where)
        for pattern, replacement in _TIBETAN_PASSES:
            cut = pc.replace_substring_regex(cut, pattern, replacement)
        spaced = replace_at(spaced, where, cut)
    out = replace_at(strings, index, spaced)
    return out.cast(texts.type) if out.type != texts.type else out


#: :data:`NO_SPACE_CLASS` without Tibetan, as an ICU set (the characters ICU cuts).
_ICU_RUN_SET = (
    r"[[:Han:][:Hiragana:][:Katakana:][:Thai:][:Lao:][:Khmer:][:Myanmar:]"
    r"\u3005\u303B\u309B\u309C\u30FC\uFF70\uFF9E\uFF9F]"
)


@cache
def _no_space_table() -> np.ndarray:
    """Per code point: is it a character of a run cut by ICU (:data:`_ICU_RUN_SET`)."""
    icu = _icu()
    chars = icu.UnicodeSet(_ICU_RUN_SET)
    table = np.zeros(0x110000, bool)
    for first, last in chars.ranges():
        table[ord(first) : ord(last) + 1] = True
    return table


@cache
def _icu():
    """PyICU (PyPI ``pyicu-wheels``), imported on first use."""
    try:
        import icu
    except ImportError as exc:
        raise UserError(
            "word segmentation of Chinese, Japanese, Thai, Lao, Khmer and Burmese needs ICU: "
            "pip install pyicu-wheels"
        ) from exc
    return icu


@cache
def _icu_word_iterator():
    """ICU's word BreakIterator (root locale: the dictionary is chosen by script)."""
    icu = _icu()
    return icu.BreakIterator.createWordInstance(icu.Locale.getRoot())


def _boundaries(strings: pa.Array) -> np.ndarray:
    """Byte positions (into the strings' data, from the first string's start) where a space goes:
    ICU's word boundaries inside runs of :func:`_no_space_table` characters, and the edges of
    those runs inside a text; sorted, distinct."""
    offsets, data = string_offsets(strings)
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    codes = np.frombuffer(data.tobytes().decode("utf-8").encode("utf-32-le"), np.uint32)
    starts_byte = np.flatnonzero((data & 0xC0) != 0x80)  # byte position of every code point
    table = _no_space_table()
    inside = table[codes]
    # runs: maximal stretches of those characters, never crossing the start of a text
    text_start = np.zeros(len(codes) + 1, bool)
    text_start[np.searchsorted(starts_byte, offsets[:-1])] = True
    text_start[len(codes)] = True
    before = np.concatenate(([False], inside[:-1])) & ~text_start[:-1]
    after = np.concatenate((inside[1:], [False])) & ~text_start[1:]
    runs_lo = np.flatnonzero(inside & ~before)
    runs_hi = np.flatnonzero(inside & ~after) + 1
    edge = text_start
    # run edges inside a text (not at its start or end)
    lo = runs_lo[~edge[runs_lo]]
    hi = runs_hi[~edge[runs_hi]]
    positions = [lo[~np.isin(codes[lo - 1], _WHITESPACE_CODES)], hi[~np.isin(codes[hi], _WHITESPACE_CODES)]]
    if len(runs_lo):
        positions.append(_icu_internal(codes, runs_lo, runs_hi))
    cps = np.unique(np.concatenate(positions))
    return starts_byte[cps] if len(cps) else np.zeros(0, np.int64)


def _icu_internal(codes: np.ndarray, runs_lo: np.ndarray, runs_hi: np.ndarray) -> np.ndarray:
    """Code point positions of ICU's word boundaries strictly inside the runs: one iterator over
    the runs joined by newlines."""
    lengths = runs_hi - runs_lo
    # the joined text: run, "\n", run, "\n", ...
    total = int(lengths.sum()) + len(lengths)
    origin = np.full(total, -1, np.int64)  # joined position -> code point index
    joined_starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    placed = ragged_index(joined_starts, lengths)
    origin[placed] = ragged_index(runs_lo, lengths)
    joined = np.full(total, 0x0A, np.uint32)
    joined[placed] = codes[origin[placed]]
    text = joined.tobytes().decode("utf-32-le")
    iterator = _icu_word_iterator()
    iterator.setText(text)
    utf16 = np.array(list(iterator), np.int64)
    # UTF-16 offsets -> code point positions of the joined text
    units = np.where(joined >= 0x10000, 2, 1)
    unit_starts = np.concatenate(([0], np.cumsum(units)))
    position = np.searchsorted(unit_starts, utf16)
    position = position[(position > 0) & (position < total)]
    # a boundary strictly inside a run: both neighbours are run characters
    inner = (origin[position - 1] >= 0) & (origin[position] >= 0)
    return origin[position[inner]]


def _insert_spaces(strings: pa.Array, positions: np.ndarray) -> pa.Array:
    """``strings`` with one space inserted before each byte position (into the data from the
    first string's start; never a string's first or last position)."""
    offsets, data = string_offsets(strings)
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    new_data = np.insert(data, positions, np.uint8(0x20))
    shift = np.searchsorted(positions, offsets, side="left")
    new_offsets = (offsets + shift).astype(np.int64)
    return pa.Array.from_buffers(
        pa.large_string(), len(strings), [None, pa.py_buffer(new_offsets), pa.py_buffer(new_data.tobytes())]
    )
