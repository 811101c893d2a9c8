# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled passes of ``--line-dedup`` (see :mod:`contentx_udf.corpus.lines`): the same results as
its numpy code, in one pass over a batch's bytes instead of a dozen.

* :func:`line_keys`: the key of every line of a batch of lowercased UTF-8 texts: each line's bytes
  with ASCII whitespace (9-13, 32) left out and ASCII digits made ``0``, hashed by the polynomial
  ``sum(byte_j * base^j) mod 2^64`` mixed with its byte length and finished by MurmurHash3's
  ``fmix64`` (what ``lines._span_hashes`` computes from a prefix sum), and whether it has at
  least ``min_chars`` characters (bytes that do not continue a UTF-8 character).
* :func:`kept_lines`: the texts without their removed lines (the kept lines joined by ``\\n``)
  and, per text, the characters removed and its first removed line.

Two passes of the quality filters' ``--signals`` measures live here too (the same results as their
numpy and Python code):

* :func:`sentences`: C4's sentence count of every text (:func:`.quality.c4._sentences`);
* :func:`greedy_repeats`: Gopher repetition's greedy count of repeated n-gram characters
  (:func:`.quality.gopher._greedy_repeated_chars`' scan).
"""

from libc.stdint cimport int8_t, int64_t, uint8_t, uint64_t
from libc.string cimport memchr, memcpy

import numpy as np


cdef inline uint64_t fmix64(uint64_t x) nogil:
    x ^= x >> 33
    x *= <uint64_t>0xFF51AFD7ED558CCD
    x ^= x >> 33
    x *= <uint64_t>0xC4CEB9FE1A85EC53
    x ^= x >> 33
    return x


cdef int64_t _count_newlines(const uint8_t* data, int64_t size) nogil:
    cdef int64_t count = 0
    cdef const uint8_t* at = data
    cdef const uint8_t* end = data + size
    cdef const void* found
    while at < end:
        found = memchr(at, 10, end - at)
        if found == NULL:
            break
        count += 1
        at = <const uint8_t*>found + 1
    return count


def line_keys(const uint8_t[::1] data, const int64_t[::1] offsets, uint64_t base, int64_t min_chars):
    """``(keys, counted, per_doc)`` of the lines of the texts ``data[offsets[i]:offsets[i + 1]]``
    (lowercased UTF-8; ``offsets`` from 0): uint64 per line, bool per line, lines per text (int64).
    Lines are cut at each ``\\n``, never across texts (a text has one line more than it has ``\\n``)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef int64_t size = offsets[n] if n >= 0 else 0
    cdef int64_t total = _count_newlines(&data[0], size) + n if size > 0 else n
    keys_array = np.empty(total, dtype=np.uint64)
    counted_array = np.empty(total, dtype=np.bool_)
    per_doc_array = np.empty(max(n, 0), dtype=np.int64)
    cdef uint64_t[::1] keys = keys_array
    cdef uint8_t[::1] counted = counted_array.view(np.uint8)
    cdef int64_t[::1] per_doc = per_doc_array
    cdef Py_ssize_t doc, line = 0, first
    cdef int64_t i, start, stop, end, length, chars
    cdef uint64_t poly, power, keep
    cdef uint8_t b
    cdef const void* found
    with nogil:
        for doc in range(n):
            first = line
            start = offsets[doc]
            end = offsets[doc + 1]
            while True:
                found = memchr(&data[start], 10, end - start) if start < end else NULL
                stop = (<const uint8_t*>found - &data[0]) if found != NULL else end
                # branch-free over the line's bytes (spaces are too frequent to predict)
                poly = 0
                power = 1
                length = 0
                chars = 0
                for i in range(start, stop):
                    b = data[i]
                    keep = (b != 32) & (<uint8_t>(b - 9) >= 5)
                    b = 48 if <uint8_t>(b - 48) < 10 else b
                    poly += (b * keep) * power
                    power *= 1 + keep * (base - 1)
                    length += keep
                    chars += keep & ((b & 0xC0) != 0x80)
                keys[line] = fmix64(poly ^ <uint64_t>length)
                counted[line] = chars >= min_chars
                line += 1
                if found == NULL:
                    break
                start = stop + 1
            per_doc[doc] = line - first
    return keys_array, counted_array, per_doc_array


def kept_lines(const uint8_t[::1] data, const int64_t[::1] offsets, const uint8_t[::1] hit):
    """The texts ``data[offsets[i]:offsets[i + 1]]`` (UTF-8, ``offsets`` from 0) without the lines
    whose ``hit`` is set (one per line, lines cut at ``\\n`` as :func:`line_keys` cuts them), the
    kept lines joined by ``\\n``: ``(new data, new offsets, characters removed per text, the byte
    span (start, end) in ``data`` of each text's first removed line, -1 when none)``."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef int64_t size = offsets[n] if n >= 0 else 0
    out_array = np.empty(size, dtype=np.uint8)
    new_offsets_array = np.zeros(max(n, 0) + 1, dtype=np.int64)
    removed_array = np.zeros(max(n, 0), dtype=np.int64)
    example_array = np.full((max(n, 0), 2), -1, dtype=np.int64)
    cdef uint8_t[::1] out = out_array
    cdef int64_t[::1] new_offsets = new_offsets_array
    cdef int64_t[::1] removed = removed_array
    cdef int64_t[:, ::1] example = example_array
    cdef Py_ssize_t doc, line = 0
    cdef int64_t at = 0, start, stop, end, j, chars, kept
    cdef const void* found
    with nogil:
        for doc in range(n):
            start = offsets[doc]
            end = offsets[doc + 1]
            kept = 0
            chars = 0
            while True:
                found = memchr(&data[start], 10, end - start) if start < end else NULL
                stop = (<const uint8_t*>found - &data[0]) if found != NULL else end
                if hit[line]:
                    for j in range(start, stop):
                        if (data[j] & 0xC0) != 0x80:
                            chars += 1
                    if found != NULL or kept > 0:
                        chars += 1  # the newline that went with it
                    if example[doc, 0] < 0:
                        example[doc, 0] = start
                        example[doc, 1] = stop
                else:
                    if kept > 0:
                        out[at] = 10
                        at += 1
                    if stop > start:
                        memcpy(&out[at], &data[start], stop - start)
                        at += stop - start
                    kept += 1
                line += 1
                if found == NULL:
                    break
                start = stop + 1
            new_offsets[doc + 1] = at
            removed[doc] = chars
    return out_array[:at], new_offsets_array, removed_array, example_array


def sentences(const int8_t[::1] kinds, const int64_t[::1] ids, const int64_t[::1] offsets):
    """Per text (``ids[offsets[i]:offsets[i + 1]]``, word ids whose kind is ``kinds[id]``: 1 a
    terminal mark, 2 a plain word, 0 other punctuation): its sentences, a new one at each plain
    word whose previous word of kind 1 or 2 is a terminal mark; 0 for a text without words."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    out_array = np.zeros(max(n, 0), dtype=np.int64)
    cdef int64_t[::1] out = out_array
    cdef Py_ssize_t t
    cdef int64_t k, count
    cdef int8_t kind, previous
    with nogil:
        for t in range(n):
            if offsets[t + 1] == offsets[t]:
                continue
            count = 1
            previous = 0
            for k in range(offsets[t], offsets[t + 1]):
                kind = kinds[ids[k]]
                if kind == 0:
                    continue
                if kind == 2 and previous == 1:
                    count += 1
                previous = kind
            out[t] = count
    return out_array


def greedy_repeats(
    const int64_t[::1] positions,
    const int64_t[::1] groups,
    const int64_t[::1] cum_len,
    const int64_t[::1] lo,
    const int64_t[::1] hi,
    const double[::1] limits,
    int64_t n,
    int64_t n_groups,
):
    """Per text ``j``: the characters of its repeated n-grams counted greedily from its start over
    ``positions[lo[j]:hi[j]]`` (ascending word positions of its n-grams that occur twice or more,
    ``groups`` their n-gram): an occurrence of an n-gram seen before counts ``cum_len[p + n] -
    cum_len[p]`` and skips the next ``n`` words; the scan stops once the count exceeds
    ``limits[j]``."""
    cdef Py_ssize_t m = lo.shape[0]
    out_array = np.zeros(m, dtype=np.int64)
    seen_array = np.zeros(max(n_groups, 1), dtype=np.uint8)
    cdef int64_t[::1] out = out_array
    cdef uint8_t[::1] seen = seen_array
    cdef Py_ssize_t j
    cdef int64_t i, p, g, next_free, total
    cdef double limit
    with nogil:
        for j in range(m):
            next_free = -1
            total = 0
            limit = limits[j]
            for i in range(lo[j], hi[j]):
                p = positions[i]
                if p < next_free:
                    continue
                g = groups[i]
                if seen[g]:
                    total += cum_len[p + n] - cum_len[p]
                    next_free = p + n
                    if <double>total > limit:
                        break
                else:
                    seen[g] = 1
            for i in range(lo[j], hi[j]):
                seen[groups[i]] = 0
            out[j] = total
    return out_array
