"""Lines that repeat across a crawl: their hashes and their removal, vectorised over a batch (numpy +
pyarrow; no Spark).

Cookie notices, newsletter boxes, "related articles" and site footers that the extractor kept are
the same line on many pages of a host.  CCNet (Wenzek et al. 2020, §3.2) hashes every normalised
paragraph of a shard and drops those seen before; Dolma does it with a Bloom filter, C4 with
3-sentence spans.  Here a line is removed from a document when its normalised hash occurs in at
least ``min_docs`` distinct documents of the same scope (the host, or the whole input):

1. **Normalise** (:func:`line_keys`, numpy over the batch's UTF-8 bytes): the text lowercased
   (``utf8_lower``), every ASCII digit made ``0`` (as CCNet's ``normalize_for_dedup``: "Updated
   3 May 2024" and "Updated 9 June 2025" are one line), and every ASCII whitespace byte left out
   (so "Share  this" and "Share this" are one line; :func:`normalised_lines` shows the result).
   Lines are cut at ``\\n`` in the lowercased and in the original text alike (lowercasing
   never adds or removes one), so a line's position is the same in both.
2. **Count** only lines of at least ``min_chars`` characters once normalised (whitespace not
   counted): short lines ("Home", "Share", "Read more") are never removed (the quality filters
   judge them).
3. **Key** (:func:`line_keys`): a 64-bit hash of the normalised line (a polynomial over its UTF-8
   bytes mod 2^64 finished by MurmurHash3's ``fmix64``, :mod:`.minhash`'s word hash applied to a
   whole line), mixed with the hash of the document's host for the ``host`` scope.  Each document
   gives each key once, however often the line repeats inside it.
4. **Remove** (:func:`remove_lines`): the lines whose key is frequent are left out of the text,
   the other lines (short ones included) kept in order.  The job (:mod:`.job`) counts the distinct
   documents per key in one Spark aggregation, and documents count by their exact-duplicate hash
   (``text_hash``), so copies of one page do not make its own lines "repeated".

Steps 1-3 and the removal's copying run compiled (:mod:`._lines`, Cython, built at install: one
pass over each batch's bytes); the numpy and pyarrow code here is the fallback without a C
compiler (or with ``CONTENTX_PURE_PYTHON=1``) and the reference the tests compare it with.

The defaults (``--line-dedup-min-docs``, ``--line-dedup-min-chars``) are measured in
``benchmarks/line_dedup.py`` (docs/curation.md "Repeated lines across the crawl").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..extensions import optional_module
from ..text.arrays import ragged_index, string_offsets
from .minhash import SEED, fmix64, odd_multipliers, powers_mod_2_64

SCOPES = ("host", "global")
#: A line counts when its normalised form has at least this many characters (``--line-dedup-min-chars``).
MIN_CHARS = 30
#: A line is removed when it occurs in at least this many distinct documents of its scope
#: (``--line-dedup-min-docs``).
MIN_DOCS = 3
#: Characters of a removed line kept as the report's example.
EXAMPLE_CHARS = 80

_U64 = np.uint64
#: Multiplier mixing the host's hash into a line's key (any odd 64-bit constant: the golden ratio's).
_HOST_MIX = _U64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class LineSettings:
    """``min_chars``: normalised characters from which a line counts; ``min_docs``: distinct
    documents of a scope from which it is removed; ``scope``: ``host`` or ``global``."""

    min_chars: int = MIN_CHARS
    min_docs: int = MIN_DOCS
    scope: str = "host"

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, got {self.scope!r}")
        if self.min_docs < 2 or self.min_chars < 1:
            raise ValueError("min_docs must be at least 2 and min_chars at least 1")


def _strings(values) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(list(values), type=pa.string())
    return values


#: Bytes per step of :func:`_span_hashes`'s prefix sum (its uint64 products fit a core's cache).
_CHUNK = 1 << 16


def _span_hashes(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, seed: int = SEED) -> np.ndarray:
    """A uint64 hash of each byte span ``data[starts[i]:ends[i]]``: the polynomial
    ``sum(byte_j * base^j) mod 2^64`` from one prefix sum over ``data``, mixed with the length and
    finished by ``fmix64`` (:func:`.minhash.word_hashes` on whole spans)."""
    if len(data) == 0:
        return fmix64((ends - starts).astype(np.uint64))
    power, inverse = powers_mod_2_64(int(odd_multipliers(seed, 0, 1)[0]), len(data) + 1)
    prefix = np.zeros(len(data) + 1, dtype=np.uint64)
    products = np.empty(min(len(data), _CHUNK), dtype=np.uint64)
    for at in range(0, len(data), _CHUNK):  # in chunks that stay in the cache (a few per batch)
        upto = min(at + _CHUNK, len(data))
        part = products[: upto - at]
        np.multiply(data[at:upto], power[at:upto], out=part, dtype=np.uint64)
        np.cumsum(part, out=prefix[at + 1 : upto + 1])
        prefix[at + 1 : upto + 1] += prefix[at]
    poly = (prefix[ends] - prefix[starts]) * inverse[starts]
    return fmix64(poly ^ (ends - starts).astype(np.uint64))


def _bytes(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets from 0, data)`` of a string array (nulls as empty strings)."""
    strings = pc.fill_null(_strings(strings), "")
    offsets, data = string_offsets(strings)
    first, last = int(offsets[0]), int(offsets[-1])
    return offsets - first, data[first:last]


def string_hashes(strings: pa.Array, seed: int = SEED) -> np.ndarray:
    """A uint64 hash of each string's UTF-8 bytes (null and empty strings hash alike)."""
    offsets, data = _bytes(strings)
    return _span_hashes(data, offsets[:-1], offsets[1:], seed)


def split_lines(texts: pa.Array) -> pa.ListArray:
    """Each text's lines (split at ``\\n``; a null text has one empty line)."""
    return pc.split_pattern(pc.fill_null(_strings(texts), ""), "\n")


@dataclass
class Lines:
    """A batch's lines: ``keys`` (uint64 per line; scope mixed in), ``counted`` (is the line long
    enough to count), ``parents`` (the document of each line), ``offsets`` (``n_docs + 1``)."""

    keys: np.ndarray
    counted: np.ndarray
    parents: np.ndarray
    offsets: np.ndarray


#: :mod:`._lines` (Cython, built at install), or None when it is not built or turned off
#: (:func:`..extensions.optional_module`): the numpy code below then gives the same results, slower.
_COMPILED = optional_module("contentx_udf.corpus._lines")


def compiled_status() -> str:
    """``"compiled"`` when the line keys and removal run compiled, else ``"numpy"``."""
    return "compiled" if _COMPILED is not None else "numpy"


def _base(seed: int = SEED) -> int:
    """The odd base of the lines' polynomial hash (:func:`_span_hashes`'s)."""
    return int(odd_multipliers(seed, 0, 1)[0])


def _keys_numpy(data: np.ndarray, offsets: np.ndarray, min_chars: int) -> tuple[np.ndarray, ...]:
    """``(keys, counted, per_doc)`` of every line of the lowercased texts ``data`` cut at
    ``offsets`` (numpy; :func:`._lines.line_keys` computes the same in one compiled pass).

    The lines are cut at each ``\\n`` (never across documents), the whitespace bytes left out (so
    spacing does not matter), ASCII digits made ``0``, each line's characters counted (bytes that
    do not continue a character) and its bytes hashed (:func:`_span_hashes`)."""
    newlines = np.flatnonzero(data == 10)
    per_doc = np.diff(np.searchsorted(newlines, offsets)) + 1  # lines per document
    starts = np.sort(np.concatenate((offsets[:-1], newlines + 1)), kind="stable")
    ends = np.sort(np.concatenate((newlines, offsets[1:])), kind="stable")
    # the bytes left out: ASCII whitespace and newlines (9-13 and 32); a boundary's place in the
    # packed bytes is its offset less the bytes left out before it (a search over their positions,
    # not a prefix sum over every byte)
    out = (data == 32) | ((data - np.uint8(9)) < 5)
    left_out = np.flatnonzero(out)
    starts = starts - np.searchsorted(left_out, starts)
    ends = ends - np.searchsorted(left_out, ends)
    packed = data[~out]
    from_zero = packed - np.uint8(48)
    packed -= from_zero * (from_zero < 10)  # ASCII digits made "0"
    # characters: the bytes less the UTF-8 continuation bytes (few in most text), counted alike
    continuing = np.flatnonzero((packed & 0xC0) == 0x80)
    characters = ends - starts - (np.searchsorted(continuing, ends) - np.searchsorted(continuing, starts))
    return _span_hashes(packed, starts, ends), characters >= min_chars, per_doc


def line_keys(
    texts: pa.Array, hosts: pa.Array | None, settings: LineSettings, compiled: bool = True
) -> Lines:
    """The key of every line of a batch (``hosts``: each document's host, used for the ``host``
    scope; a null host is a host of its own name ``""``).

    Over the batch's lowercased UTF-8 bytes: compiled (:func:`._lines.line_keys`, one pass), or
    numpy (:func:`_keys_numpy`) when the extension is not built or ``compiled`` is false; the
    same keys either way."""
    offsets, data = _bytes(pc.utf8_lower(pc.fill_null(_strings(texts), "")))
    n = len(offsets) - 1
    if compiled and _COMPILED is not None:
        keys, counted, per_doc = _COMPILED.line_keys(data, offsets, _base(), settings.min_chars)
    else:
        keys, counted, per_doc = _keys_numpy(data, offsets, settings.min_chars)
    parents = np.repeat(np.arange(n, dtype=np.int64), per_doc)
    if settings.scope == "host" and len(keys):
        keys = fmix64(keys ^ (string_hashes(hosts)[parents] * _HOST_MIX))
    line_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_doc, out=line_offsets[1:])
    return Lines(keys, counted, parents, line_offsets)


def normalised_lines(texts: pa.Array) -> pa.ListArray:
    """Each text's lines as they are counted (for reading: the keys hash the same bytes): lowercased,
    ASCII digits made ``0``, whitespace left out."""
    lower = pc.utf8_lower(pc.fill_null(_strings(texts), ""))
    digits = pc.replace_substring_regex(lower, r"[0-9]", "0")
    packed = pc.replace_substring_regex(digits, r"[ \t\r\v\f]+", "")
    return pc.split_pattern(packed, "\n")


def document_keys(texts: pa.Array, hosts: pa.Array | None, settings: LineSettings) -> pa.ListArray:
    """Per document, the distinct keys (int64, Spark's ``long``) of its counted lines: what the
    job's aggregation counts."""
    lines = line_keys(texts, hosts, settings)
    parents, keys = lines.parents[lines.counted], lines.keys[lines.counted]
    order = np.lexsort((keys, parents))
    parents, keys = parents[order], keys[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]) | (parents[1:] != parents[:-1])
    parents, keys = parents[first], keys[first]
    offsets = np.zeros(len(texts) + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=len(texts)), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(keys.view(np.int64), type=pa.int64()))


def few_documents(keys: np.ndarray, docs: np.ndarray, at_most: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(key, doc)`` pairs of one part of the input (uint64 and int64 arrays of one
    entry per pair), sorted by key then doc, with at most ``at_most`` (the smallest) documents per
    key.  With ``at_most = min_docs`` the union of every part's pairs still tells which keys have at
    least ``min_docs`` distinct documents (:func:`frequent_keys`): a key of ``min_docs`` documents
    in one part keeps ``min_docs`` of them, and a key of fewer in every part keeps them all."""
    keys, docs = np.asarray(keys, np.uint64), np.asarray(docs, np.int64)
    order = np.lexsort((docs, keys))
    keys, docs = keys[order], docs[order]
    new_key = np.ones(len(keys), dtype=bool)
    new_key[1:] = keys[1:] != keys[:-1]
    distinct = new_key.copy()
    distinct[1:] |= docs[1:] != docs[:-1]
    keys, docs, new_key = keys[distinct], docs[distinct], new_key[distinct]
    # the rank of each pair among its key's documents: its index less its key's first index
    first = np.flatnonzero(new_key)
    rank = np.arange(len(keys)) - np.repeat(first, np.diff(np.append(first, len(keys))))
    keep = rank < at_most
    return keys[keep], docs[keep]


def frequent_keys(keys: np.ndarray, docs: np.ndarray, min_docs: int) -> np.ndarray:
    """The sorted keys (uint64) of at least ``min_docs`` distinct documents among the
    ``(key, doc)`` pairs (the parts' :func:`few_documents`, concatenated)."""
    keys, docs = few_documents(keys, docs, min_docs)
    if len(keys) == 0:
        return keys
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(np.append(starts, len(keys)))
    return keys[starts[counts >= min_docs]]


def frequent_in(keys: np.ndarray, frequent: np.ndarray) -> np.ndarray:
    """Which of ``keys`` (uint64) are in ``frequent`` (a sorted uint64 array)."""
    if len(frequent) == 0 or len(keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(frequent, keys), len(frequent) - 1)
    return frequent[at] == keys


def listed_in(lines: Lines, listed: pa.ListArray) -> np.ndarray:
    """Which lines' keys are in their own document's list (``listed``: per document, the frequent
    keys found for it by a join)."""
    flat = listed.flatten().to_numpy(zero_copy_only=False).view(np.uint64)
    offsets = listed.offsets.to_numpy().astype(np.int64)
    owners = np.repeat(np.arange(len(listed), dtype=np.int64), np.diff(offsets - offsets[0]))
    # a (document, key) pair as one 64-bit value: a false match needs a 2^-64 coincidence
    pair = np.sort(fmix64(flat ^ (owners.astype(np.uint64) * _HOST_MIX)))
    return frequent_in(fmix64(lines.keys ^ (lines.parents.astype(np.uint64) * _HOST_MIX)), pair)


@dataclass
class Removed:
    """What :func:`remove_lines` did: the new ``text`` (string array, every document),
    ``changed`` (bool), ``lines`` and ``chars`` removed (int32 per document), and ``example``
    (the first removed line, cut to :data:`EXAMPLE_CHARS`; null where none was)."""

    text: pa.Array
    changed: np.ndarray
    lines: np.ndarray
    chars: np.ndarray
    example: pa.Array


def remove_lines(
    texts: pa.Array,
    hosts: pa.Array | None,
    settings: LineSettings,
    frequent: np.ndarray | None = None,
    listed: pa.ListArray | None = None,
    compiled: bool = True,
) -> Removed:
    """Leave out of each text its counted lines whose key is frequent: in the sorted uint64 array
    ``frequent`` (the whole input's frequent keys), or in the document's own ``listed`` keys.
    Compiled (:func:`._lines.kept_lines`: the kept lines' bytes copied in one pass), or with
    pyarrow (only the texts that lose a line split and joined again); the same result."""
    texts = _strings(texts).cast(pa.string())
    n = len(texts)
    use_compiled = compiled and _COMPILED is not None
    lines = line_keys(texts, hosts, settings, compiled=use_compiled)
    if listed is not None:
        hit = listed_in(lines, listed)
    else:
        hit = frequent_in(lines.keys, frequent if frequent is not None else np.zeros(0, np.uint64))
    hit &= lines.counted
    removed_per_doc = np.bincount(lines.parents[hit], minlength=n).astype(np.int32)
    changed = removed_per_doc > 0
    if not changed.any():
        return Removed(texts, changed, removed_per_doc, np.zeros(n, np.int32), pa.nulls(n, type=pa.string()))
    edit = _edit_compiled if use_compiled else _edit_arrow
    text, chars, example = edit(texts, lines, hit, changed)
    return Removed(text=text, changed=changed, lines=removed_per_doc, chars=chars, example=example)


def _edit_compiled(texts: pa.Array, lines: Lines, hit: np.ndarray, changed: np.ndarray) -> tuple:
    """``(text, chars, example)`` of :func:`remove_lines` by :func:`._lines.kept_lines`."""
    n = len(texts)
    offsets, data = _bytes(texts)
    new_data, new_offsets, chars, spans = _COMPILED.kept_lines(data, offsets, hit.view(np.uint8))
    text = pa.Array.from_buffers(
        pa.large_string(), n, [None, pa.py_buffer(new_offsets), pa.py_buffer(new_data)]
    ).cast(pa.string())
    if texts.null_count:  # (a null text has no line to lose: it stays null)
        text = pc.if_else(texts.is_valid(), text, pa.scalar(None, pa.string()))
    docs = np.flatnonzero(changed)
    starts, lengths = spans[docs, 0], spans[docs, 1] - spans[docs, 0]
    example_offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=example_offsets[1:])
    first = pa.Array.from_buffers(
        pa.large_string(),
        len(docs),
        [None, pa.py_buffer(example_offsets), pa.py_buffer(data[ragged_index(starts, lengths)])],
    )
    cut = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(first), 0, EXAMPLE_CHARS).cast(pa.string())
    return text, chars.astype(np.int32), _put(pa.nulls(n, type=pa.string()), docs, cut)


def _edit_arrow(texts: pa.Array, lines: Lines, hit: np.ndarray, changed: np.ndarray) -> tuple:
    """``(text, chars, example)`` of :func:`remove_lines` with pyarrow: the texts that lose a line
    split, filtered and joined again."""
    n = len(texts)
    chars = np.zeros(n, dtype=np.int32)
    docs = np.flatnonzero(changed)
    taken = pa.array(docs)
    before = texts.take(taken)
    original = split_lines(before).flatten()
    per_doc = np.diff(lines.offsets)[docs]
    sub_hit = hit[ragged_index(lines.offsets[docs], per_doc)]
    owner = np.repeat(np.arange(len(docs), dtype=np.int64), per_doc)
    kept_offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[~sub_hit], minlength=len(docs)), out=kept_offsets[1:])
    rebuilt = pa.LargeListArray.from_arrays(
        pa.array(kept_offsets), original.filter(pa.array(~sub_hit)).cast(pa.large_string())
    )
    after = pc.binary_join(rebuilt, pa.scalar("\n", pa.large_string())).cast(pa.string())
    chars[docs] = pc.utf8_length(before).to_numpy(zero_copy_only=False) - pc.utf8_length(after).to_numpy(
        zero_copy_only=False
    )
    text = _put(texts, docs, after)
    # the example: each changed document's first removed line
    hits = np.flatnonzero(sub_hit)
    first = np.ones(len(hits), dtype=bool)
    first[1:] = owner[hits[1:]] != owner[hits[:-1]]
    first_lines = original.take(pa.array(hits[first]))
    cut = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(first_lines), 0, EXAMPLE_CHARS)
    example = _put(pa.nulls(n, type=pa.string()), docs, cut.cast(pa.string()))
    return text, chars, example


def _put(values: pa.Array, index: np.ndarray, new: pa.Array) -> pa.Array:
    """``values`` with ``values[index[j]]`` replaced by ``new[j]``."""
    mapping = np.arange(len(values), dtype=np.int64)
    mapping[index] = len(values) + np.arange(len(index))
    return pa.concat_arrays([values, new]).take(pa.array(mapping))
