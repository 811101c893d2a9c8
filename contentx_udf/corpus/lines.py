"""Lines that repeat across a crawl: their hashes and their removal, vectorised over a batch (numpy +
pyarrow; no Spark).

Cookie notices, newsletter boxes, "related articles" and site footers that the extractor kept are
the same line on many pages of a host.  CCNet (Wenzek et al. 2020, §3.2) hashes every normalised
paragraph of a shard and drops those seen before; Dolma does it with a Bloom filter, C4 with
3-sentence spans.  Here a line is removed from a document when its normalised hash occurs in at
least ``min_docs`` distinct documents of the same scope (the host, or the whole input):

1. **Normalise** (:func:`normalised_lines`): the text lowercased (``utf8_lower``), every ASCII digit
   made ``0`` (as CCNet's ``normalize_for_dedup``: "Updated 3 May 2024" and "Updated 9 June 2025"
   are one line), every run of whitespace inside a line made one space, and each line stripped.
   The original text and the normalised one have the same lines (nothing adds or removes a
   newline), so a line's position is the same in both.
2. **Count** only lines of at least ``min_chars`` normalised characters: short lines ("Home",
   "Share", "Read more") are never removed (the quality filters judge them).
3. **Key** (:func:`line_keys`): a 64-bit hash of the normalised line (a polynomial over its UTF-8
   bytes mod 2^64 finished by MurmurHash3's ``fmix64``, :mod:`.minhash`'s word hash applied to a
   whole line), mixed with the hash of the document's host for the ``host`` scope.  Each document
   gives each key once, however often the line repeats inside it.
4. **Remove** (:func:`remove_lines`): the lines whose key is frequent are left out of the text,
   the other lines (short ones included) kept in order.  The job (:mod:`.job`) counts the distinct
   documents per key in one Spark aggregation, and documents count by their exact-duplicate hash
   (``text_hash``), so copies of one page do not make its own lines "repeated".

The defaults (``--line-dedup-min-docs``, ``--line-dedup-min-chars``) are measured in
``benchmarks/line_dedup.py`` (README "Repeated lines across the crawl").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .minhash import SEED, _odd, _powers, fmix64

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


def string_hashes(strings: pa.Array, seed: int = SEED) -> np.ndarray:
    """A uint64 hash of each string's UTF-8 bytes (null and empty strings hash alike): the
    polynomial ``sum(byte_j * base^j) mod 2^64`` from one prefix sum over the array's data, mixed
    with the length and finished by ``fmix64`` (:func:`.minhash.word_hashes` on whole strings)."""
    strings = _strings(strings)
    n = len(strings)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    buffers = strings.buffers()
    width = np.int64 if strings.type in (pa.large_string(), pa.large_binary()) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=width)[strings.offset : strings.offset + n + 1].astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    offsets -= first
    if buffers[2] is None or last == first:
        return fmix64(np.zeros(n, dtype=np.uint64))
    data = np.frombuffer(buffers[2], dtype=np.uint8)[first:last]
    power, inverse = _powers(int(_odd(seed, 0, 1)[0]), len(data) + 1)
    prefix = np.zeros(len(data) + 1, dtype=np.uint64)
    np.cumsum(data.astype(np.uint64) * power[: len(data)], out=prefix[1:])
    starts, ends = offsets[:-1], offsets[1:]
    poly = (prefix[ends] - prefix[starts]) * inverse[starts]
    return fmix64(poly ^ (ends - starts).astype(np.uint64))


def split_lines(texts: pa.Array) -> pa.ListArray:
    """Each text's lines (split at ``\\n``; a null text has none)."""
    return pc.split_pattern(pc.fill_null(_strings(texts), ""), "\n")


def normalised_lines(texts: pa.Array) -> pa.ListArray:
    """Each text's lines normalised for counting (see the module doc), in the text's line order."""
    lower = pc.utf8_lower(pc.fill_null(_strings(texts), ""))
    digits = pc.replace_substring_regex(lower, r"[0-9]", "0")
    spaced = pc.replace_substring_regex(digits, r"[^\S\n]+", " ")
    lines = pc.split_pattern(spaced, "\n")
    trimmed = pc.utf8_trim_whitespace(lines.flatten())
    return pa.ListArray.from_arrays(lines.offsets, trimmed)


@dataclass
class Lines:
    """A batch's lines: ``keys`` (uint64 per line; scope mixed in), ``counted`` (is the line long
    enough to count), ``parents`` (the document of each line), ``offsets`` (``n_docs + 1``)."""

    keys: np.ndarray
    counted: np.ndarray
    parents: np.ndarray
    offsets: np.ndarray


def line_keys(texts: pa.Array, hosts: pa.Array | None, settings: LineSettings) -> Lines:
    """The key of every line of a batch (``hosts``: each document's host, used for the ``host``
    scope; a null host is a host of its own name ``""``)."""
    lines = normalised_lines(texts)
    flat = lines.flatten()
    offsets = lines.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    parents = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(offsets))
    keys = string_hashes(flat)
    counted = pc.utf8_length(flat).to_numpy(zero_copy_only=False) >= settings.min_chars
    if settings.scope == "host" and len(keys):
        host_hash = string_hashes(pc.fill_null(_strings(hosts), ""))
        keys = fmix64(keys ^ (host_hash[parents] * _HOST_MIX))
    return Lines(keys, counted, parents, offsets)


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
) -> Removed:
    """Leave out of each text its counted lines whose key is frequent: in the sorted uint64 array
    ``frequent`` (the whole input's frequent keys), or in the document's own ``listed`` keys."""
    texts = _strings(texts)
    n = len(texts)
    lines = line_keys(texts, hosts, settings)
    if listed is not None:
        hit = listed_in(lines, listed)
    else:
        hit = frequent_in(lines.keys, frequent if frequent is not None else np.zeros(0, np.uint64))
    hit &= lines.counted
    original = split_lines(texts).flatten()
    removed_per_doc = np.bincount(lines.parents[hit], minlength=n).astype(np.int32)
    changed = removed_per_doc > 0
    keep = ~hit
    kept_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(lines.parents[keep], minlength=n), out=kept_offsets[1:])
    rebuilt = pa.LargeListArray.from_arrays(
        pa.array(kept_offsets), original.filter(pa.array(keep)).cast(pa.large_string())
    )
    joined = pc.binary_join(rebuilt, pa.scalar("\n", pa.large_string())).cast(pa.string())
    text = pc.if_else(pa.array(changed), joined, texts.cast(pa.string()))
    before = pc.utf8_length(pc.fill_null(texts, "")).to_numpy(zero_copy_only=False)
    after = pc.utf8_length(pc.fill_null(text, "")).to_numpy(zero_copy_only=False)
    # the example: each changed document's first removed line
    example = pa.nulls(n, type=pa.string())
    hit_index = np.flatnonzero(hit)
    if len(hit_index):
        docs_hit = lines.parents[hit_index]
        first = np.ones(len(hit_index), dtype=bool)
        first[1:] = docs_hit[1:] != docs_hit[:-1]
        lines_taken = original.take(pa.array(hit_index[first]))
        cut = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(lines_taken), 0, EXAMPLE_CHARS)
        mapping = np.full(n, len(cut), dtype=np.int64)
        mapping[docs_hit[first]] = np.arange(len(cut))
        example = pa.concat_arrays([cut.cast(pa.string()), pa.nulls(1, pa.string())]).take(pa.array(mapping))
    return Removed(
        text=text,
        changed=changed,
        lines=removed_per_doc,
        chars=(before - after).astype(np.int32),
        example=example,
    )
