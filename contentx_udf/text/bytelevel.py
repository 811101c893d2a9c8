"""Exact token counts and ids, fast, for the tokenizers that split text as GPT-2 does.

A ``tokenizers`` tokenizer encodes a text in four steps: the added (special) tokens are cut out,
the normalizer rewrites the text, the pre-tokenizer splits it into pre-tokens, and the model
tokenizes each pre-token on its own (``PreTokenizedString::tokenize``).  With no normalizer and
GPT-2's ``ByteLevel`` pre-tokenizer (its regex split, then each byte mapped to a printable
character), a text's tokens are therefore the concatenation of its pre-tokens' tokens, whatever
the model (BPE, WordPiece, WordLevel, Unigram).  :class:`ByteLevelCounter` splits the texts'
UTF-8 bytes itself (the compiled ``_tokcount``, which runs the regex over the Unicode classes
below) and asks the tokenizer's own model only for a pre-token it has not seen in this process:
on web text nearly every pre-token is one seen before, and the library's own pre-tokenizer (its
regex engine) is where ``encode`` spends its time.

:func:`counter_for` says which tokenizers it serves (else None: :mod:`.tokens` encodes with the
library).  A text that holds an added token's content is encoded by the library.  The splits equal
the library's on every code point and on generated text (tests/text/test_bytelevel.py), and the
counts equal ``encode`` on the 1,678 development pages (``benchmarks/token_export.py``).
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The classes ``_tokcount`` splits by: other, letter (``\\p{L}``), number (``\\p{N}``), space (``\\s``)
OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3
#: ``\\s`` of the library's regex engine (Oniguruma, Unicode): White_Space
WHITE_SPACE = (
    *range(0x09, 0x0E),
    0x20,
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)

#: ``(first, last, class)``: code points unassigned in Python 3.11's Unicode (14.0) that the
#: Oniguruma of ``tokenizers`` >= 0.20 (Unicode 16.0) knows as letters or numbers; made by
#: ``tools/bytelevel_classes.py``, which probes the library with every code point Python calls
#: unassigned (829,834 of them; 9,392 differ).  :func:`library_agrees` checks them in each process.
NEWER_UNICODE = (
    (0x1C89, 0x1C8A, 1),
    (0xA7CB, 0xA7CD, 1),
    (0xA7DA, 0xA7DC, 1),
    (0x105C0, 0x105F3, 1),
    (0x10D40, 0x10D49, 2),
    (0x10D4A, 0x10D65, 1),
    (0x10D6F, 0x10D85, 1),
    (0x10EC2, 0x10EC4, 1),
    (0x1123F, 0x11240, 1),
    (0x11380, 0x11389, 1),
    (0x1138B, 0x1138B, 1),
    (0x1138E, 0x1138E, 1),
    (0x11390, 0x113B5, 1),
    (0x113B7, 0x113B7, 1),
    (0x113D1, 0x113D1, 1),
    (0x113D3, 0x113D3, 1),
    (0x116D0, 0x116E3, 2),
    (0x11BC0, 0x11BE0, 1),
    (0x11BF0, 0x11BF9, 2),
    (0x11F02, 0x11F02, 1),
    (0x11F04, 0x11F10, 1),
    (0x11F12, 0x11F33, 1),
    (0x11F50, 0x11F59, 2),
    (0x1342F, 0x1342F, 1),
    (0x13441, 0x13446, 1),
    (0x13460, 0x143FA, 1),
    (0x16100, 0x1611D, 1),
    (0x16130, 0x16139, 2),
    (0x16D40, 0x16D6C, 1),
    (0x16D70, 0x16D79, 2),
    (0x18CFF, 0x18CFF, 1),
    (0x1B132, 0x1B132, 1),
    (0x1B155, 0x1B155, 1),
    (0x1CCF0, 0x1CCF9, 2),
    (0x1D2C0, 0x1D2D3, 2),
    (0x1DF25, 0x1DF2A, 1),
    (0x1E030, 0x1E06D, 1),
    (0x1E4D0, 0x1E4EB, 1),
    (0x1E4F0, 0x1E4F9, 2),
    (0x1E5D0, 0x1E5ED, 1),
    (0x1E5F0, 0x1E5F0, 1),
    (0x1E5F1, 0x1E5FA, 2),
    (0x2B739, 0x2B739, 1),
    (0x2EBF0, 0x2EE5D, 1),
    (0x31350, 0x323AF, 1),
)


@lru_cache(maxsize=1)
def classes() -> np.ndarray:
    """One class per code point (``uint8``, 0x110000 of them): Python's Unicode tables, and the
    letters and numbers of :data:`NEWER_UNICODE`."""
    table = np.zeros(0x110000, dtype=np.uint8)
    category = unicodedata.category
    for cp in range(0x110000):
        c = category(chr(cp))[0]
        if c == "L":
            table[cp] = LETTER
        elif c == "N":
            table[cp] = NUMBER
    table[list(WHITE_SPACE)] = SPACE
    for first, last, klass in NEWER_UNICODE:
        table[first : last + 1] = klass
    return table


#: Code points of each class, and the edges of :data:`NEWER_UNICODE`, that :func:`library_agrees`
#: splits with the library
PROBES = (0x41, 0xE9, 0x4E2D, 0x1F600, 0x661, 0xBD, 0x2028, 0x3000, 0x85, 0xA0, 0x2C, 0xAD, 0x10FFFF)


@lru_cache(maxsize=1)
def library_agrees() -> bool:
    """Whether the installed library splits as :func:`classes` says on :data:`PROBES` and the
    first and last code point of each :data:`NEWER_UNICODE` range (another Unicode version: the
    counter is not used)."""
    from tokenizers import pre_tokenizers

    from ._tokcount import split_offsets

    points = [*PROBES, *(c for first, last, _ in NEWER_UNICODE for c in (first, last))]
    text = "".join(f"a{chr(c)}1{chr(c)}!\n{chr(c)} {chr(c)}x{chr(c)}  " for c in points)
    theirs = [piece for piece, _ in pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text)]
    data = text.encode("utf-8")
    ends = split_offsets(data, classes())
    return theirs == [byte_level(data[s:e]) for s, e in zip([0, *ends[:-1]], ends, strict=True)]


@lru_cache(maxsize=1)
def byte_chars() -> tuple[str, ...]:
    """GPT-2's ``bytes_to_unicode``: the printable character ``ByteLevel`` writes for each byte."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = dict.fromkeys(printable)
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
        else:
            chars[b] = b
    return tuple(chr(chars[b]) for b in range(256))


@lru_cache(maxsize=1)
def _translation() -> dict[int, str]:
    return dict(enumerate(byte_chars()))


def byte_level(key: bytes) -> str:
    """A pre-token's bytes as ``ByteLevel`` hands them to the model."""
    return key.decode("latin-1").translate(_translation())


def served(tokenizer_json: str) -> dict[str, Any] | None:
    """What :class:`ByteLevelCounter` needs of a tokenizer it serves (``prefix_space``, the added
    tokens' contents), or None: a normalizer, another pre-tokenizer, BPE dropout."""
    try:
        spec = json.loads(tokenizer_json)
    except ValueError:
        return None
    pre = spec.get("pre_tokenizer") or {}
    model = spec.get("model") or {}
    if spec.get("normalizer") is not None or pre.get("type") != "ByteLevel" or not pre.get("use_regex", True):
        return None
    if model.get("dropout") not in (None, 0, 0.0):
        return None
    post = spec.get("post_processor")
    return {
        "prefix_space": bool(pre.get("add_prefix_space", True)),
        "added": tuple(t["content"] for t in spec.get("added_tokens") or () if t.get("content")),
        # ids with the tokenizer's special tokens equal the text's own only without a template
        "plain_post": post is None or post.get("type") == "ByteLevel",
    }


class ByteLevelCounter:
    """The counts and ids of a served tokenizer's texts (one per process and tokenizer)."""

    def __init__(self, tokenizer, facts: dict[str, Any]):
        from . import _tokcount

        if not library_agrees():
            raise ImportError("the library splits by another Unicode version")
        model = tokenizer.model
        self.prefix_space = facts["prefix_space"]
        self.added = facts["added"]
        self.plain_post = facts["plain_post"]

        def resolve(key: bytes) -> list[int]:
            return [token.id for token in model.tokenize(byte_level(key))]

        self.cache = _tokcount.PretokenCache(resolve, classes())

    def library_rows(self, texts: pa.Array) -> np.ndarray:
        """Which texts the library must encode: those holding an added token's content (found by
        one search of the texts' bytes per added token), and an empty text when a space is put
        before each (the library's own edge)."""
        n = len(texts)
        rows = np.zeros(n, dtype=bool)
        if n == 0:
            return rows
        if self.added:
            data, offsets, _ = self._buffers(texts, rows)
            start, end = int(offsets[0]), int(offsets[-1])
            held = data[start:end].tobytes()
            for content in self.added:
                needle = content.encode("utf-8")
                at = held.find(needle)
                while at >= 0:  # the text the match starts in (a text holds it whole)
                    row = int(np.searchsorted(offsets, start + at, side="right")) - 1
                    rows[row] = True
                    at = held.find(needle, int(offsets[row + 1]) - start)
        if self.prefix_space:
            rows |= pc.fill_null(pc.equal(pc.binary_length(texts), 0), False).to_numpy(zero_copy_only=False)
        valid = texts.is_valid().to_numpy(zero_copy_only=False)
        return rows & valid

    def _buffers(self, texts: pa.Array, todo: np.ndarray):
        texts = texts.cast(pa.large_string())
        _, offsets, data = texts.buffers()
        offsets = np.frombuffer(offsets, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
        data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        return data, np.ascontiguousarray(offsets), np.ascontiguousarray(todo, dtype=np.uint8)

    def counts(self, texts: pa.Array, todo: np.ndarray) -> np.ndarray:
        """The token counts of ``texts`` where ``todo`` (0 elsewhere)."""
        return self.cache.counts(*self._buffers(texts, todo), self.prefix_space)

    def encode(self, texts: pa.Array, todo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, lengths)``: the ids of the texts where ``todo`` end to end (int32), each one's count."""
        return self.cache.encode(*self._buffers(texts, todo), self.prefix_space)
