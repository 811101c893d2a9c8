# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Token counts and ids of UTF-8 texts for the tokenizers whose pre-tokenizer is GPT-2's
``ByteLevel`` regex split (``tokenizers``' ``ByteLevel(use_regex=True)``, no normalizer): the
texts' bytes are split into pre-tokens here, each pre-token's model tokens are looked up in a
per-process cache keyed by its bytes, and only a pre-token not seen before is tokenized by the
tokenizer's own model (the ``resolve`` callback).  The model tokenizes each pre-token on its own
(``tokenizers``: ``PreTokenizedString.tokenize`` calls ``Model.tokenize`` per split), so the sum
is the library's own count.

The split is the regex of ``tokenizers/src/pre_tokenizers/byte_level.rs``,
``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``, run as
Oniguruma runs it (leftmost alternative, greedy) over a class per code point (``classes``: 0 other,
1 letter, 2 number, 3 white space) that the caller builds from the Unicode tables the library's
regex engine uses (:mod:`.tokencount`; tests/text/test_tokencount.py compares the splits with the
library's on every code point).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy

import numpy as np

cdef enum:
    OTHER = 0
    LETTER = 1
    NUMBER = 2
    SPACE = 3


cdef inline int decode(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, uint32_t* cp) noexcept nogil:
    """The code point at byte ``i`` of valid UTF-8 (a stray byte is taken alone), its length."""
    cdef uint8_t b = s[i]
    if b < 0x80:
        cp[0] = b
        return 1
    if b >= 0xF0:
        if i + 3 < n:
            cp[0] = ((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
            return 4
    elif b >= 0xE0:
        if i + 2 < n:
            cp[0] = ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
            return 3
    elif b >= 0xC0:
        if i + 1 < n:
            cp[0] = ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
            return 2
    cp[0] = 0xFFFD
    return 1


cdef inline uint8_t class_at(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, const uint8_t* classes, int* length) noexcept nogil:
    cdef uint32_t cp
    length[0] = decode(s, i, n, &cp)
    if cp > 0x10FFFF:
        return OTHER
    return classes[cp]


cdef Py_ssize_t next_split(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, const uint8_t* classes) noexcept nogil:
    """The end of the pre-token that starts at byte ``i``."""
    cdef int length, length2
    cdef uint8_t k, k2, b, b2
    cdef Py_ssize_t j, last
    k = class_at(s, i, n, classes, &length)
    if s[i] == 39 and i + 1 < n:  # 's 't 're 've 'm 'll 'd
        b = s[i + 1]
        if b == 115 or b == 116 or b == 109 or b == 100:
            return i + 2
        if i + 2 < n:
            b2 = s[i + 2]
            if (b == 114 and b2 == 101) or (b == 118 and b2 == 101) or (b == 108 and b2 == 108):
                return i + 3
    if s[i] == 32 and i + 1 < n:  # ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+' with their space
        k2 = class_at(s, i + 1, n, classes, &length2)
        if k2 != SPACE:
            j = i + 1 + length2
            while j < n and class_at(s, j, n, classes, &length2) == k2:
                j += length2
            return j
    if k != SPACE:
        j = i + length
        while j < n and class_at(s, j, n, classes, &length2) == k:
            j += length2
        return j
    # white space: the run, less its last character when a non-space follows ('\s+(?!\S)'), or
    # that one character alone ('\s+')
    last = i
    j = i + length
    while j < n:
        k2 = class_at(s, j, n, classes, &length2)
        if k2 != SPACE:
            break
        last = j
        j += length2
    if j == n or last == i:
        return j
    return last


cdef inline uint64_t fnv1a(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ s[i]) * 1099511628211ULL
    return h


def split_offsets(const uint8_t[::1] data, const uint8_t[::1] classes):
    """The byte offsets where the pre-tokens of one UTF-8 text end (for tests)."""
    cdef Py_ssize_t i = 0, n = data.shape[0]
    out = []
    while i < n:
        i = next_split(&data[0], i, n, &classes[0])
        out.append(i)
    return out


cdef class PretokenCache:
    """Pre-token bytes -> its model token ids, an open-addressing table over two arenas (the keys'
    bytes, the ids).  Emptied when it grows past ``max_entries`` or ``max_bytes`` (checked between
    batches): memory bounded."""

    cdef uint64_t* slot_hash
    cdef int64_t* slot_entry
    cdef Py_ssize_t slots, entries, entry_cap
    cdef int64_t* key_off
    cdef int32_t* key_len
    cdef int64_t* ids_off
    cdef int32_t* ids_len
    cdef uint8_t* keys
    cdef Py_ssize_t keys_used, keys_cap
    cdef int32_t* ids
    cdef Py_ssize_t ids_used, ids_cap
    cdef public Py_ssize_t max_entries, max_bytes
    cdef public object resolve
    cdef const uint8_t* classes
    cdef object classes_ref

    def __cinit__(self, resolve, classes, Py_ssize_t max_entries=2_000_000, Py_ssize_t max_bytes=256 << 20):
        self.resolve = resolve
        self.classes_ref = np.ascontiguousarray(classes, dtype=np.uint8)
        if len(self.classes_ref) != 0x110000:
            raise ValueError("classes: one byte per code point (0x110000)")
        cdef const uint8_t[::1] view = self.classes_ref
        self.classes = &view[0]
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.slot_hash = NULL
        self.slot_entry = NULL
        self.key_off = NULL
        self.key_len = NULL
        self.ids_off = NULL
        self.ids_len = NULL
        self.keys = NULL
        self.ids = NULL
        self._allocate()

    cdef void _free(self) noexcept:
        free(self.slot_hash); free(self.slot_entry); free(self.key_off); free(self.key_len)
        free(self.ids_off); free(self.ids_len); free(self.keys); free(self.ids)

    cdef _allocate(self):
        cdef Py_ssize_t i
        self._free()
        self.slots = 1 << 16
        self.entries = 0
        self.entry_cap = self.slots // 2
        self.slot_hash = <uint64_t*>malloc(self.slots * sizeof(uint64_t))
        self.slot_entry = <int64_t*>malloc(self.slots * sizeof(int64_t))
        self.key_off = <int64_t*>malloc(self.entry_cap * sizeof(int64_t))
        self.key_len = <int32_t*>malloc(self.entry_cap * sizeof(int32_t))
        self.ids_off = <int64_t*>malloc(self.entry_cap * sizeof(int64_t))
        self.ids_len = <int32_t*>malloc(self.entry_cap * sizeof(int32_t))
        self.keys_cap = 1 << 20
        self.keys_used = 0
        self.keys = <uint8_t*>malloc(self.keys_cap)
        self.ids_cap = 1 << 18
        self.ids_used = 0
        self.ids = <int32_t*>malloc(self.ids_cap * sizeof(int32_t))
        if (self.slot_hash == NULL or self.slot_entry == NULL or self.key_off == NULL or self.key_len == NULL
                or self.ids_off == NULL or self.ids_len == NULL or self.keys == NULL or self.ids == NULL):
            raise MemoryError()
        for i in range(self.slots):
            self.slot_entry[i] = -1

    def __dealloc__(self):
        self._free()

    @property
    def size(self) -> int:
        """Pre-tokens held."""
        return self.entries

    def clear(self):
        """Forget every pre-token."""
        self._allocate()

    cdef _grow_slots(self):
        cdef Py_ssize_t old = self.slots, i, j, mask
        cdef uint64_t* old_hash = self.slot_hash
        cdef int64_t* old_entry = self.slot_entry
        self.slots = old * 2
        mask = self.slots - 1
        self.slot_hash = <uint64_t*>malloc(self.slots * sizeof(uint64_t))
        self.slot_entry = <int64_t*>malloc(self.slots * sizeof(int64_t))
        if self.slot_hash == NULL or self.slot_entry == NULL:
            raise MemoryError()
        for i in range(self.slots):
            self.slot_entry[i] = -1
        for i in range(old):
            if old_entry[i] >= 0:
                j = <Py_ssize_t>(old_hash[i] & <uint64_t>mask)
                while self.slot_entry[j] >= 0:
                    j = (j + 1) & mask
                self.slot_hash[j] = old_hash[i]
                self.slot_entry[j] = old_entry[i]
        free(old_hash)
        free(old_entry)

    cdef _grow_entries(self):
        cdef Py_ssize_t cap = self.entry_cap * 2
        cdef void* p
        p = realloc(self.key_off, cap * sizeof(int64_t))
        if p == NULL: raise MemoryError()
        self.key_off = <int64_t*>p
        p = realloc(self.key_len, cap * sizeof(int32_t))
        if p == NULL: raise MemoryError()
        self.key_len = <int32_t*>p
        p = realloc(self.ids_off, cap * sizeof(int64_t))
        if p == NULL: raise MemoryError()
        self.ids_off = <int64_t*>p
        p = realloc(self.ids_len, cap * sizeof(int32_t))
        if p == NULL: raise MemoryError()
        self.ids_len = <int32_t*>p
        self.entry_cap = cap

    cdef int64_t _add(self, const uint8_t* key, Py_ssize_t n, uint64_t h, Py_ssize_t slot) except -1:
        """A new entry for ``key`` (its ids from ``resolve``) in ``slot``; its index."""
        cdef object found = self.resolve(bytes(key[:n]))
        cdef const int32_t[::1] got = np.ascontiguousarray(found, dtype=np.int32)
        cdef Py_ssize_t m = got.shape[0], cap
        cdef int64_t e = self.entries
        cdef void* p
        if e >= self.entry_cap:
            self._grow_entries()
        if self.keys_used + n > self.keys_cap:
            cap = max(self.keys_cap * 2, self.keys_used + n)
            p = realloc(self.keys, cap)
            if p == NULL: raise MemoryError()
            self.keys = <uint8_t*>p
            self.keys_cap = cap
        if self.ids_used + m > self.ids_cap:
            cap = max(self.ids_cap * 2, self.ids_used + m)
            p = realloc(self.ids, cap * sizeof(int32_t))
            if p == NULL: raise MemoryError()
            self.ids = <int32_t*>p
            self.ids_cap = cap
        memcpy(self.keys + self.keys_used, key, n)
        self.key_off[e] = self.keys_used
        self.key_len[e] = <int32_t>n
        self.keys_used += n
        if m:
            memcpy(self.ids + self.ids_used, &got[0], m * sizeof(int32_t))
        self.ids_off[e] = self.ids_used
        self.ids_len[e] = <int32_t>m
        self.ids_used += m
        self.slot_hash[slot] = h
        self.slot_entry[slot] = e
        self.entries += 1
        if self.entries * 2 > self.slots:
            self._grow_slots()
        return e

    cdef inline int64_t _find(self, const uint8_t* key, Py_ssize_t n) except -1:
        cdef uint64_t h = fnv1a(key, n)
        cdef Py_ssize_t mask = self.slots - 1
        cdef Py_ssize_t j = <Py_ssize_t>(h & <uint64_t>mask)
        cdef int64_t e
        while True:
            e = self.slot_entry[j]
            if e < 0:
                return self._add(key, n, h, j)
            if (self.slot_hash[j] == h and self.key_len[e] == n
                    and memcmp(self.keys + self.key_off[e], key, n) == 0):
                return e
            j = (j + 1) & mask

    cdef _bound(self):
        if self.entries > self.max_entries or self.keys_used + 4 * self.ids_used > self.max_bytes:
            self._allocate()

    cdef int64_t _text(self, const uint8_t* s, Py_ssize_t n, int32_t* out, Py_ssize_t* fill) except -1:
        """The tokens of one text (``out``: their ids from ``fill[0]`` on, when not NULL)."""
        cdef Py_ssize_t i = 0, end
        cdef int64_t e, total = 0
        while i < n:
            end = next_split(s, i, n, self.classes)
            e = self._find(s + i, end - i)
            if out != NULL:
                memcpy(out + fill[0], self.ids + self.ids_off[e], self.ids_len[e] * sizeof(int32_t))
                fill[0] += self.ids_len[e]
            total += self.ids_len[e]
            i = end
        return total

    def counts(self, const uint8_t[::1] data, const int64_t[::1] offsets, const uint8_t[::1] todo,
               bint prefix_space=False):
        """Token counts of the texts ``data[offsets[i]:offsets[i + 1]]`` where ``todo[i]`` (else 0);
        ``prefix_space``: a space put before each text that does not start with one (ByteLevel's
        ``add_prefix_space``)."""
        cdef Py_ssize_t rows = offsets.shape[0] - 1, r
        result = np.zeros(rows, dtype=np.int64)
        cdef int64_t[::1] view = result
        cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
        self._bound()
        for r in range(rows):
            if todo[r]:
                view[r] = self._one(base, offsets[r], offsets[r + 1], prefix_space, NULL, NULL)
        return result

    def encode(self, const uint8_t[::1] data, const int64_t[::1] offsets, const uint8_t[::1] todo,
               bint prefix_space=False):
        """``(ids, lengths)``: the token ids of the texts where ``todo`` (end to end, int32) and each
        text's count (0 where not ``todo``)."""
        lengths = self.counts(data, offsets, todo, prefix_space)
        cdef Py_ssize_t rows = offsets.shape[0] - 1, r, fill = 0
        ids = np.empty(int(lengths.sum()), dtype=np.int32)
        cdef int32_t[::1] out = ids
        cdef int32_t* target = &out[0] if out.shape[0] else NULL
        cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
        for r in range(rows):
            if todo[r]:
                self._one(base, offsets[r], offsets[r + 1], prefix_space, target, &fill)
        return ids, lengths

    cdef int64_t _one(self, const uint8_t* base, int64_t start, int64_t end, bint prefix_space,
                      int32_t* out, Py_ssize_t* fill) except -1:
        cdef Py_ssize_t n = end - start
        cdef uint8_t* copy
        cdef int64_t total
        if prefix_space and (n == 0 or base[start] != 32):
            copy = <uint8_t*>malloc(n + 1)
            if copy == NULL:
                raise MemoryError()
            copy[0] = 32
            if n:
                memcpy(copy + 1, base + start, n)
            try:
                total = self._text(copy, n + 1, out, fill)
            finally:
                free(copy)
            return total
        return self._text(base + start, n, out, fill)
