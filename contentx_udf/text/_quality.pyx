# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""fastText's supervised prediction with every label (``predict(line, k=-1, threshold=0)``)
compiled for quality classifiers: the probabilities fastText's C++ gives, bit for bit on the
tests' models (:mod:`contentx_udf.text.classifier` has the numpy path and the steps, in the same
order and with the same float32 operations).

What is faster than fastText (0.9.2) while giving the same floats:

* no C++ stream: the text is read once as UTF-8 (``PyUnicode_AsUTF8AndSize``, cached by CPython
  on the string), DCLM's preparation (``" ".join(text.strip().splitlines())``) done while
  tokenising, each token hashed in place (no ``std::string``);
* the dictionary is a power-of-two open-addressing table over (hash, id, the word's first 24
  bytes) sized twice the vocabulary (fastText's ``word2int_`` has 30 million slots: a cache miss
  per token);
* ``h % bucket`` by multiplication (Lemire, Kaser & Kurz, "Faster remainder by direct
  computation", 2019) instead of a 64-bit division per word n-gram;
* the dictionary look-up, the character n-grams, the pruned index and the rows' sum are the
  shared core of both fastText predictors (``_fasttext.pxd``, the language identifier's too);
* the rows' sum prefetches the rows a few ahead (a large model's rows are cache misses) and adds
  a row with vector instructions (the same per-element float additions, in the same order);
* the input matrix is read where the file is mapped (possibly unaligned: the reads are).

Built with ``-ffp-contract=off`` so that no multiply-add is fused (fastText rounds each product).
"""

from libc.math cimport exp, expf
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp

from ._fasttext cimport (
    Core,
    QMatrix,
    Tables,
    add_row,
    centroid,
    dot,
    find_word,
    fnv,
    hash_bytes,
    mix,
    mod64,
    ngram_row,
    prefetch,
    prefetch_row,
    quantized_matrix,
    row_address,
    std_log,
    subwords,
)

import numpy as np


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    bint Py_UNICODE_ISSPACE(uint32_t ch) nogil


DEF LOSS_HS = 1
DEF LOSS_SOFTMAX = 3
DEF LOSS_OVA = 4
cdef const char *EOS = "</s>"


cdef struct Model:
    Core c  # the dictionary, the n-gram buckets, the input matrix (_fasttext.pxd)
    int osz
    int loss
    # the output matrix
    int oquantized
    QMatrix oq
    const float *wo
    # hierarchical softmax's tree; one-vs-all's sigmoid table
    const int32_t *left
    const int32_t *right
    const float *sigmoid


cdef struct Rows:
    int32_t *ids
    Py_ssize_t n
    Py_ssize_t cap


cdef int _grow(Rows *r, Py_ssize_t need) noexcept nogil:
    """Room for ``need`` more ids; -1 when out of memory."""
    cdef Py_ssize_t cap
    cdef int32_t *ids
    if r.n + need <= r.cap:
        return 0
    cap = max(2 * r.cap, r.n + need + 1024)
    ids = <int32_t *>realloc(r.ids, cap * sizeof(int32_t))
    if ids == NULL:
        return -1
    r.ids = ids
    r.cap = cap
    return 0



cdef inline void _push_hash(const Model *m, Rows *r, uint32_t id) noexcept nogil:
    """``Dictionary::pushHash``: the input row of n-gram bucket ``id``, if any (room reserved)."""
    cdef int32_t row = ngram_row(&m.c, id)
    if row >= 0:
        r.ids[r.n] = row
        r.n += 1


cdef int _bracketed_ngrams(const Model *m, const char *token, Py_ssize_t length, Rows *r) noexcept nogil:
    """``Dictionary::computeSubwords`` of ``<token>`` into ``r``; -1: no memory."""
    cdef char *w = <char *>malloc(length + 2)
    cdef Py_ssize_t i
    if w == NULL:
        return -1
    if _grow(r, (length + 2) * max(m.c.maxn, 0) + 1) < 0:
        free(w)
        return -1
    w[0] = b'<'
    for i in range(length):
        w[i + 1] = token[i]
    w[length + 1] = b'>'
    r.n += subwords(&m.c, w, length + 2, NULL, r.ids + r.n)
    free(w)
    return 0



cdef inline int _separator(const char *s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """Bytes of the separator at ``s[i]``, else 0: fastText's (space, tab, VT, FF, CR, LF, NUL)
    and the other line breaks of ``str.splitlines`` (FS, GS, RS, NEL, LS, PS), which DCLM's
    preparation makes spaces."""
    cdef uint8_t c = <uint8_t>s[i]
    if c == 32 or (9 <= c <= 13) or c == 0 or (28 <= c <= 30):
        return 1
    if c == 0xC2 and i + 1 < end and <uint8_t>s[i + 1] == 0x85:
        return 2
    if (c == 0xE2 and i + 2 < end and <uint8_t>s[i + 1] == 0x80
            and (<uint8_t>s[i + 2] == 0xA8 or <uint8_t>s[i + 2] == 0xA9)):
        return 3
    return 0


cdef inline uint32_t _decode(const char *s, Py_ssize_t i, Py_ssize_t end, int *width) noexcept nogil:
    """The code point of the UTF-8 sequence at ``s[i]`` (its length in ``width``; a stray byte
    is itself)."""
    cdef uint8_t c = <uint8_t>s[i]
    width[0] = 1
    if c < 0x80:
        return c
    if c >= 0xF0 and i + 3 < end:
        width[0] = 4
        return ((c & 7) << 18) | ((<uint8_t>s[i + 1] & 0x3F) << 12) | ((<uint8_t>s[i + 2] & 0x3F) << 6) | (<uint8_t>s[i + 3] & 0x3F)
    if c >= 0xE0 and i + 2 < end:
        width[0] = 3
        return ((c & 15) << 12) | ((<uint8_t>s[i + 1] & 0x3F) << 6) | (<uint8_t>s[i + 2] & 0x3F)
    if c >= 0xC0 and i + 1 < end:
        width[0] = 2
        return ((c & 31) << 6) | (<uint8_t>s[i + 1] & 0x3F)
    return c


cdef void _strip(const char *s, Py_ssize_t *start, Py_ssize_t *end) noexcept nogil:
    """``str.strip()`` on UTF-8: the bounds without the white space (``Py_UNICODE_ISSPACE``) at
    both ends."""
    cdef int width
    cdef Py_ssize_t i = start[0], j = end[0], k
    while i < j:
        if not Py_UNICODE_ISSPACE(_decode(s, i, j, &width)):
            break
        i += width
    while j > i:
        k = j - 1
        while k > i and (<uint8_t>s[k] & 0xC0) == 0x80 and j - k < 4:
            k -= 1
        if not Py_UNICODE_ISSPACE(_decode(s, k, j, &width)) or k + width != j:
            break
        j = k
    start[0] = i
    end[0] = j





cdef struct Tokens:
    Py_ssize_t *start  # -1: the end-of-line token
    int32_t *length
    uint32_t *hash
    Py_ssize_t n
    Py_ssize_t cap


cdef int _grow_tokens(Tokens *t) noexcept nogil:
    """Room for one more token; -1 when out of memory."""
    cdef Py_ssize_t cap
    cdef void *p
    if t.n < t.cap:
        return 0
    cap = 2 * t.cap + 1024
    p = realloc(t.start, cap * sizeof(Py_ssize_t))
    if p == NULL:
        return -1
    t.start = <Py_ssize_t *>p
    p = realloc(t.length, cap * sizeof(int32_t))
    if p == NULL:
        return -1
    t.length = <int32_t *>p
    p = realloc(t.hash, cap * sizeof(uint32_t))
    if p == NULL:
        return -1
    t.hash = <uint32_t *>p
    t.cap = cap
    return 0


cdef uint8_t SEP_RAW[256]  # fastText's separators: space, tab, LF, VT, FF, CR, NUL
cdef uint8_t SEP_PREPARED[256]  # and the other line breaks (2: the lead byte of NEL, LS, PS)


cdef void _separator_tables() noexcept nogil:
    cdef int c
    for c in range(256):
        SEP_RAW[c] = 1 if (c == 32 or 9 <= c <= 13 or c == 0) else 0
        SEP_PREPARED[c] = 1 if (c == 32 or 9 <= c <= 13 or c == 0 or 28 <= c <= 30) else 0
    SEP_PREPARED[0xC2] = 2
    SEP_PREPARED[0xE2] = 2


_separator_tables()


cdef int _tokens(const Model *m, const char *s, Py_ssize_t size, bint prepare, Tokens *t) noexcept nogil:
    """``Dictionary::readWord`` over the line ``s`` up to its end-of-line token (prepared as DCLM
    does when ``prepare``, else split at fastText's separators, a newline ending it): each
    token's place and hash (hashed while it is read), its dictionary slot prefetched (the
    look-ups that follow find them in cache instead of waiting for each in turn); -1: no
    memory."""
    cdef Py_ssize_t pos = 0, end = size, start
    cdef int sep
    cdef uint8_t c
    cdef bint eos = False
    cdef uint32_t h
    cdef const uint8_t *table = &SEP_RAW[0]
    if prepare:
        table = &SEP_PREPARED[0]
    t.n = 0
    if prepare:
        _strip(s, &pos, &end)
    while not eos:
        # the separators before the token
        while pos < end:
            c = <uint8_t>s[pos]
            if table[c] == 0:
                break
            if table[c] == 1:
                if c == 10 and not prepare:
                    pos = end  # (the line ends here: its end-of-line token follows)
                    break
                pos += 1
            else:
                sep = _separator(s, pos, end)
                if sep == 0:
                    break
                pos += sep
        if _grow_tokens(t) < 0:
            return -1
        if pos >= end:
            h = hash_bytes(EOS, 4)
            eos = True
            t.start[t.n] = -1
            t.length[t.n] = 4
        else:
            start = pos
            h = <uint32_t>2166136261
            while pos < end:
                c = <uint8_t>s[pos]
                if table[c] != 0 and (table[c] == 1 or _separator(s, pos, end) != 0):
                    break
                h = fnv(h, <char>c)
                pos += 1
            eos = pos - start == 4 and memcmp(s + start, EOS, 4) == 0
            t.start[t.n] = start
            t.length[t.n] = <int32_t>(pos - start)
        t.hash[t.n] = h
        t.n += 1
        prefetch(m.c.wtab + 8 * (mix(h) & m.c.wmask))
    return 0


cdef int _line_rows(const Model *m, const char *s, Py_ssize_t size, bint prepare, Rows *r,
                    Rows *hashes, Tokens *t) noexcept nogil:
    """``Dictionary::getLine`` of the line ``s`` (:func:`_tokens`): the input rows into ``r``, in
    fastText's order (each token's, then the word n-grams'), each row prefetched for the sum;
    -1: no memory."""
    cdef Py_ssize_t i, k, length
    cdef const char *token
    cdef bint eos
    cdef uint32_t h
    cdef int32_t wid, row
    cdef int8_t kind
    cdef uint64_t hh
    r.n = 0
    hashes.n = 0
    if _tokens(m, s, size, prepare, t) < 0:
        return -1
    for i in range(t.n):
        if t.start[i] >= 0:
            token = s + t.start[i]
        else:
            token = EOS
        length = t.length[i]
        h = t.hash[i]
        eos = i == t.n - 1
        wid = find_word(&m.c, token, length, h, &kind)
        if wid < 0:
            kind = 1 if length >= m.c.label_len and memcmp(token, m.c.label, m.c.label_len) == 0 else 0
        if kind != 0:
            continue
        if wid >= 0:
            if m.c.sub_off != NULL:
                k = m.c.sub_off[wid + 1] - m.c.sub_off[wid]
                if _grow(r, k) < 0:
                    return -1
                for k in range(m.c.sub_off[wid], m.c.sub_off[wid + 1]):
                    row = m.c.sub_ids[k]
                    prefetch_row(row_address(&m.c, row), m.c.row_bytes)
                    r.ids[r.n] = row
                    r.n += 1
            else:
                if _grow(r, 1) < 0:
                    return -1
                prefetch_row(row_address(&m.c, wid), m.c.row_bytes)
                r.ids[r.n] = wid
                r.n += 1
        elif not eos and m.c.maxn > 0:
            if _bracketed_ngrams(m, token, length, r) < 0:
                return -1
        if _grow(hashes, 1) < 0:
            return -1
        hashes.ids[hashes.n] = <int32_t>h
        hashes.n += 1
    # Dictionary::addWordNgrams: the hashes are int32_t, widened to uint64_t with their sign
    if m.c.word_ngrams > 1 and m.c.bucket > 0:
        if _grow(r, hashes.n * (m.c.word_ngrams - 1)) < 0:
            return -1
        k = r.n
        for i in range(hashes.n):
            hh = <uint64_t><int64_t>hashes.ids[i]
            for length in range(i + 1, min(hashes.n, i + m.c.word_ngrams)):
                hh = hh * <uint64_t>116049371 + <uint64_t><int64_t>hashes.ids[length]
                _push_hash(m, r, <uint32_t>mod64(hh, m.c.magic_lo, m.c.magic_hi, m.c.bucket))
                if r.n > k:
                    prefetch_row(row_address(&m.c, r.ids[r.n - 1]), m.c.row_bytes)
                    k = r.n
    return 0



cdef float _dot_row(const Model *m, const float *x, int32_t i) noexcept nogil:
    """``Matrix::dotRow`` of output row ``i``: ``DenseMatrix``'s, or ``QuantMatrix``'s
    (``ProductQuantizer::mulcode`` times the row's norm)."""
    cdef float d = 0.0, alpha = 1.0
    cdef int k, n, w
    cdef const uint8_t *code
    cdef const float *c
    if not m.oquantized:
        return dot(m.wo + <int64_t>m.c.dim * i, x, m.c.dim)
    if m.oq.qnorm:
        alpha = m.oq.norm_centroids[m.oq.norm_codes[i]]
    code = m.oq.codes + <int64_t>m.oq.nsubq * i
    for k in range(m.oq.nsubq):
        c = centroid(&m.oq, code, k, &w)
        for n in range(w):
            d += x[k * m.oq.dsub + n] * c[n]
    return d * alpha




cdef float _sigmoid(const Model *m, float x) noexcept nogil:
    """``Loss::sigmoid``: fastText's table of 513 values over [-8, 8]."""
    cdef int64_t i
    if x < -8:
        return 0.0
    if x > 8:
        return 1.0
    i = <int64_t>((x + <float>8) * <float>512 / <float>8 / <float>2)
    return m.sigmoid[i]


cdef void _dfs(const Model *m, float floor, int32_t node, float score, const float *hidden,
               float *out) noexcept nogil:
    """``HierarchicalSoftmaxLoss::dfs`` with k = -1: every leaf whose path keeps the score at or
    above the threshold's log gets ``exp(score)``."""
    cdef float f, e, one = 1.0
    if score < floor:
        return
    if m.left[node] == -1 and m.right[node] == -1:
        out[node] = expf(score)
        return
    f = _dot_row(m, hidden, node - m.osz)
    e = expf(-f)
    f = one / (one + e)
    _dfs(m, floor, m.left[node], score + std_log(one - f), hidden, out)
    _dfs(m, floor, m.right[node], score + std_log(f), hidden, out)


cdef void _predict(const Model *m, const Rows *r, float *hidden, float *out) noexcept nogil:
    """``Model::computeHidden`` of the rows, then the loss's output for every label into ``out``
    (``exp(log(p + 1e-5))``, fastText's ``predictLine``); zeros for a line without rows."""
    cdef Py_ssize_t k
    cdef int j
    cdef float scale, mx, z
    for j in range(m.osz):
        out[j] = 0.0
    if r.n == 0:
        return
    for j in range(m.c.dim):
        hidden[j] = 0.0
    for k in range(r.n):  # (each row was prefetched when it was found)
        add_row(&m.c, hidden, r.ids[k])
    scale = <float>(1.0 / <double>r.n)
    for j in range(m.c.dim):
        hidden[j] *= scale
    if m.loss == LOSS_HS:
        _dfs(m, std_log(0.0), 2 * m.osz - 2, 0.0, hidden, out)
        return
    for j in range(m.osz):
        out[j] = _dot_row(m, hidden, j)
    if m.loss == LOSS_SOFTMAX:
        mx = out[0]
        for j in range(m.osz):
            if out[j] > mx:
                mx = out[j]
        z = 0.0
        for j in range(m.osz):
            out[j] = <float>exp(<double>(out[j] - mx))
            z += out[j]
        for j in range(m.osz):
            out[j] /= z
    else:
        for j in range(m.osz):
            out[j] = _sigmoid(m, out[j])
    for j in range(m.osz):
        out[j] = expf(std_log(out[j]))


cdef const void *_pointer(object array):
    cdef size_t address = array.__array_interface__["data"][0]
    return <const void *>address


cdef class Scorer:
    """A fastText supervised model (:class:`~contentx_udf.text.fasttext_file.FastTextFile`, its
    arrays views of the mapped file) ready to score lines; holds only the dictionary's look-up
    tables and the tree of its own."""

    cdef Model m
    cdef list _keep
    cdef Rows rows
    cdef Rows hashes
    cdef Tokens tokens
    cdef float *hidden
    cdef readonly int nlabels

    def __cinit__(self):
        self.rows.ids = NULL
        self.rows.n = self.rows.cap = 0
        self.hashes.ids = NULL
        self.hashes.n = self.hashes.cap = 0
        self.hidden = NULL
        self.tokens.start = NULL
        self.tokens.length = NULL
        self.tokens.hash = NULL
        self.tokens.n = self.tokens.cap = 0

    def __dealloc__(self):
        free(self.tokens.start)
        free(self.tokens.length)
        free(self.tokens.hash)
        free(self.rows.ids)
        free(self.hashes.ids)
        free(self.hidden)

    def __init__(self, model, sigmoid, left, right):
        cdef Model *m = &self.m
        cdef Tables tables = Tables(model)  # the dictionary, the buckets, the input (_fasttext.pyx)
        self._keep = [tables]
        m.c = tables.core
        m.osz = model.nlabels
        self.nlabels = model.nlabels
        m.loss = model.loss

        # output matrix (a label's row each: small, copied aligned)
        out = model.output
        if isinstance(out, np.ndarray):
            m.oquantized = 0
            wo = np.ascontiguousarray(out, dtype=np.float32).copy()
            self._keep.append(wo)
            m.wo = <const float *>_pointer(wo)
        else:
            m.oquantized = 1
            m.oq = quantized_matrix(out, self._keep)

        sigmoid = np.ascontiguousarray(sigmoid, dtype=np.float32)
        left = np.ascontiguousarray(left, dtype=np.int32)
        right = np.ascontiguousarray(right, dtype=np.int32)
        self._keep += [sigmoid, left, right]
        m.sigmoid = <const float *>_pointer(sigmoid)
        m.left = <const int32_t *>_pointer(left)
        m.right = <const int32_t *>_pointer(right)
        self.hidden = <float *>malloc(max(m.c.dim, 1) * sizeof(float))
        if self.hidden == NULL:
            raise MemoryError()

    def rows_of(self, bytes line, bint prepare=True):
        """The input rows of ``line`` in fastText's order (tests)."""
        if _line_rows(&self.m, line, len(line), prepare, &self.rows, &self.hashes, &self.tokens) < 0:
            raise MemoryError()
        return [self.rows.ids[i] for i in range(self.rows.n)]

    def predict(self, bytes line, float[::1] out, bint prepare=False):
        """The probability of each label of the UTF-8 ``line`` into ``out`` (fastText's
        ``predict(line, k=-1)``; 0 for a label it leaves out); prepared as DCLM does first when
        ``prepare``."""
        if out.shape[0] < self.m.osz:
            raise ValueError("out is shorter than the labels")
        if _line_rows(&self.m, line, len(line), prepare, &self.rows, &self.hashes, &self.tokens) < 0:
            raise MemoryError()
        _predict(&self.m, &self.rows, self.hidden, &out[0])

    def probabilities(self, texts, float[:, ::1] out):
        """Each text's probabilities (row ``i`` of ``out``), the text prepared as DCLM does; a
        None text leaves its row as it is."""
        cdef Py_ssize_t i = 0, size
        cdef const char *data
        if out.shape[1] < self.m.osz or out.shape[0] < len(texts):
            raise ValueError("out is too small")
        for text in texts:
            if text is not None:
                try:
                    data = PyUnicode_AsUTF8AndSize(text, &size)
                except UnicodeEncodeError:  # (a lone surrogate: encoded as the numpy path does)
                    encoded = (<str>text).encode("utf-8", "surrogatepass")
                    data = encoded
                    size = len(encoded)
                if _line_rows(&self.m, data, size, True, &self.rows, &self.hashes, &self.tokens) < 0:
                    raise MemoryError()
                _predict(&self.m, &self.rows, self.hidden, &out[i, 0])
            i += 1

    def probabilities_utf8(self, size_t address, Py_ssize_t size, const int64_t[::1] offsets,
                           const uint8_t[::1] nulls, float[:, ::1] out):
        """:meth:`probabilities` of the UTF-8 strings of an Arrow string array read where they
        are (no Python string made): string ``i`` is ``data[offsets[i]:offsets[i + 1]]`` of the
        ``size`` bytes at ``address``; a row whose ``nulls`` is set is left as it is."""
        cdef Py_ssize_t i, n = offsets.shape[0] - 1
        cdef const char *data = <const char *>address
        cdef int64_t start, end
        if nulls.shape[0] < n or out.shape[0] < n or out.shape[1] < self.m.osz:
            raise ValueError("nulls or out too small")
        for i in range(n):
            if nulls[i]:
                continue
            start = offsets[i]
            end = offsets[i + 1]
            if start < 0 or end < start or end > size:
                raise ValueError("offsets out of the data")
            if _line_rows(&self.m, data + start, end - start, True, &self.rows, &self.hashes,
                          &self.tokens) < 0:
                raise MemoryError()
            _predict(&self.m, &self.rows, self.hidden, &out[i, 0])