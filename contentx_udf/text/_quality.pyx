# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""fastText's supervised prediction with every label (``predict(line, k=-1, threshold=0)``)
compiled for quality classifiers: the probabilities fastText's C++ gives, bit for bit on the
tests' models (:mod:`contentx_udf.text.classifier` has the numpy path and the steps, in the same
order and with the same float32 operations).

What is faster than fastText (0.9.2) while giving the same floats:

* no C++ stream: the text is read once as UTF-8 (``PyUnicode_AsUTF8AndSize``, cached by CPython
  on the string), DCLM's preparation (``" ".join(text.strip().splitlines())``) done while
  tokenising, each token hashed in place (no ``std::string``);
* the dictionary is a power-of-two open-addressing table over (hash, id) sized twice the
  vocabulary (fastText's ``word2int_`` has 30 million slots: a cache miss per token);
* ``h % bucket`` by multiplication (Lemire, Kaser & Kurz, "Faster remainder by direct
  computation", 2019) instead of a 64-bit division per word n-gram;
* the rows' sum prefetches the rows a few ahead (a large model's rows are cache misses) and adds
  a row with vector instructions (the same per-element float additions, in the same order);
* the input matrix is read where the file is mapped (possibly unaligned: the reads are).

Built with ``-ffp-contract=off`` so that no multiply-add is fused (fastText rounds each product).
"""

from libc.math cimport exp, expf, log
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy

import numpy as np


cdef extern from *:
    """
    /* a float read at any address (the input matrix sits where the dictionary ends in the file) */
    typedef float ufloat __attribute__((aligned(1)));
    static inline void q_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
    /* a row of `bytes` bytes: every cache line it spans, into all the caches */
    static inline void q_prefetch_row(const void *p, long bytes) {
        const char *c = (const char *)p;
        long k;
        for (k = 0; k < bytes; k += 64) __builtin_prefetch(c + k, 0, 3);
        __builtin_prefetch(c + bytes - 1, 0, 3);
    }
    /* h % d for a 64-bit h (Lemire's fastmod_u64): M = 2**128 / d rounded up */
    static inline uint64_t q_mod64(uint64_t h, uint64_t m_lo, uint64_t m_hi, uint64_t d) {
        __uint128_t M = ((__uint128_t)m_hi << 64) | m_lo;
        __uint128_t low = M * h;
        __uint128_t bottom = ((low & 0xFFFFFFFFFFFFFFFFULL) * (__uint128_t)d) >> 64;
        __uint128_t top = (low >> 64) * (__uint128_t)d;
        return (uint64_t)((bottom + top) >> 64);
    }
    static inline void q_magic(uint64_t d, uint64_t *lo, uint64_t *hi) {
        __uint128_t M = ((__uint128_t)-1) / d + 1;
        *lo = (uint64_t)M; *hi = (uint64_t)(M >> 64);
    }
    """
    ctypedef float ufloat
    void q_prefetch(const void *p) nogil
    void q_prefetch_row(const void *p, long bytes) nogil
    uint64_t q_mod64(uint64_t h, uint64_t m_lo, uint64_t m_hi, uint64_t d) nogil
    void q_magic(uint64_t d, uint64_t *lo, uint64_t *hi) nogil


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    bint Py_UNICODE_ISSPACE(uint32_t ch) nogil


DEF LOSS_HS = 1
DEF LOSS_SOFTMAX = 3
DEF LOSS_OVA = 4
cdef const char *EOS = "</s>"


cdef struct Model:
    int dim
    long row_bytes  # bytes of an input row (dense: dim floats; quantized: its codes)
    int minn
    int maxn
    int nwords
    int osz
    int word_ngrams
    int loss
    uint32_t bucket
    uint64_t magic_lo
    uint64_t magic_hi
    int64_t pruneidx_size
    # the dictionary: open addressing on the FNV-1a hash, (hash, id) side by side
    const uint32_t *wtab  # 8 per slot: hash, id | label << 31 (0xFFFFFFFF: empty), 24 bytes of the word
    uint32_t wmask
    const int64_t *woff
    const char *wbytes
    const int8_t *wtype
    const int32_t *sub_off  # each word's rows (itself, then its character n-grams), maxn > 0
    const int32_t *sub_ids
    const char *label
    int label_len
    # the pruned n-gram index of a quantized model: bucket -> row - nwords
    const int32_t *pkey
    const int32_t *pval
    uint32_t pmask
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
    const ufloat *dense
    # the output matrix
    int oquantized
    int oqnorm
    int onsubq
    int odsub
    int olastdsub
    const uint8_t *ocodes
    const float *ocentroids
    const uint8_t *onorm_codes
    const float *onorm_centroids
    const float *wo
    # hierarchical softmax's tree; one-vs-all's sigmoid table
    const int32_t *left
    const int32_t *right
    const float *sigmoid


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


DEF INLINE = 24  # bytes of a word kept in its dictionary slot


cdef struct Prefix:
    uint64_t w[3]


cdef inline Prefix _prefix(const char *w, Py_ssize_t n) noexcept nogil:
    """The first :data:`INLINE` bytes of ``w``, zero-padded (no token or word holds a NUL)."""
    cdef Prefix p
    p.w[0] = p.w[1] = p.w[2] = 0
    memcpy(p.w, w, min(n, INLINE))
    return p


cdef inline int32_t _find_word(const Model *m, const char *w, Py_ssize_t n, uint32_t h,
                               int8_t *kind) noexcept nogil:
    """``Dictionary::find``: the id of the word ``w`` (its type in ``kind``), or -1.  A slot (32
    bytes) holds the hash, the id (the top bit set for a label) and the word's first 24 bytes:
    a word of 24 bytes or fewer is found with one memory access."""
    cdef uint32_t slot = _mix(h) & m.wmask
    cdef uint32_t wid
    cdef Prefix p = _prefix(w, n)
    cdef const uint32_t *e
    cdef const uint64_t *q
    while True:
        e = m.wtab + 8 * slot
        wid = e[1]
        if wid == <uint32_t>0xFFFFFFFFu:
            return -1
        q = <const uint64_t *>(e + 2)
        if e[0] == h and q[0] == p.w[0] and q[1] == p.w[1] and q[2] == p.w[2]:
            kind[0] = <int8_t>(wid >> 31)
            wid &= 0x7FFFFFFF
            if n <= INLINE:
                return <int32_t>wid
            if (m.woff[wid + 1] - m.woff[wid] == n
                    and memcmp(m.wbytes + m.woff[wid] + INLINE, w + INLINE, n - INLINE) == 0):
                return <int32_t>wid
        slot = (slot + 1) & m.wmask


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


cdef inline void _push_hash(const Model *m, Rows *r, int32_t id) noexcept nogil:
    """``Dictionary::pushHash``: the input row of n-gram bucket ``id`` (room reserved)."""
    cdef uint32_t slot
    cdef int32_t key
    if m.pruneidx_size == 0 or id < 0:
        return
    if m.pruneidx_size > 0:
        slot = _mix(<uint32_t>id) & m.pmask
        while True:
            key = m.pkey[slot]
            if key < 0:
                return
            if key == id:
                id = m.pval[slot]
                break
            slot = (slot + 1) & m.pmask
    r.ids[r.n] = m.nwords + id
    r.n += 1


cdef int _char_ngrams(const Model *m, const char *w, Py_ssize_t size, Rows *r) noexcept nogil:
    """``Dictionary::computeSubwords`` of the bracketed word ``w`` into ``r``; -1: no memory."""
    cdef Py_ssize_t i, j
    cdef int n
    cdef uint32_t h
    if _grow(r, size * max(m.maxn, 0) + 1) < 0:
        return -1
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
                _push_hash(m, r, <int32_t>(h % m.bucket))
            n += 1
    return 0


cdef int _bracketed_ngrams(const Model *m, const char *token, Py_ssize_t length, Rows *r) noexcept nogil:
    """:func:`_char_ngrams` of ``<token>``; -1: no memory."""
    cdef char *w = <char *>malloc(length + 2)
    cdef Py_ssize_t i
    cdef int k
    if w == NULL:
        return -1
    w[0] = b'<'
    for i in range(length):
        w[i + 1] = token[i]
    w[length + 1] = b'>'
    k = _char_ngrams(m, w, length + 2, r)
    free(w)
    return k


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


cdef inline const void *_row_address(const Model *m, int32_t row) noexcept nogil:
    if m.quantized:
        return m.codes + <int64_t>m.nsubq * row
    return m.dense + <int64_t>m.dim * row


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
            h = _hash(EOS, 4)
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
                h = _fnv(h, <char>c)
                pos += 1
            eos = pos - start == 4 and memcmp(s + start, EOS, 4) == 0
            t.start[t.n] = start
            t.length[t.n] = <int32_t>(pos - start)
        t.hash[t.n] = h
        t.n += 1
        q_prefetch(m.wtab + 8 * (_mix(h) & m.wmask))
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
        wid = _find_word(m, token, length, h, &kind)
        if wid < 0:
            kind = 1 if length >= m.label_len and memcmp(token, m.label, m.label_len) == 0 else 0
        if kind != 0:
            continue
        if wid >= 0:
            if m.sub_off != NULL:
                k = m.sub_off[wid + 1] - m.sub_off[wid]
                if _grow(r, k) < 0:
                    return -1
                for k in range(m.sub_off[wid], m.sub_off[wid + 1]):
                    row = m.sub_ids[k]
                    q_prefetch_row(_row_address(m, row), m.row_bytes)
                    r.ids[r.n] = row
                    r.n += 1
            else:
                if _grow(r, 1) < 0:
                    return -1
                q_prefetch_row(_row_address(m, wid), m.row_bytes)
                r.ids[r.n] = wid
                r.n += 1
        elif not eos and m.maxn > 0:
            if _bracketed_ngrams(m, token, length, r) < 0:
                return -1
        if _grow(hashes, 1) < 0:
            return -1
        hashes.ids[hashes.n] = <int32_t>h
        hashes.n += 1
    # Dictionary::addWordNgrams: the hashes are int32_t, widened to uint64_t with their sign
    if m.word_ngrams > 1 and m.bucket > 0:
        if _grow(r, hashes.n * (m.word_ngrams - 1)) < 0:
            return -1
        k = r.n
        for i in range(hashes.n):
            hh = <uint64_t><int64_t>hashes.ids[i]
            for length in range(i + 1, min(hashes.n, i + m.word_ngrams)):
                hh = hh * <uint64_t>116049371 + <uint64_t><int64_t>hashes.ids[length]
                _push_hash(m, r, <int32_t>q_mod64(hh, m.magic_lo, m.magic_hi, m.bucket))
                if r.n > k:
                    q_prefetch_row(_row_address(m, r.ids[r.n - 1]), m.row_bytes)
                    k = r.n
    return 0


cdef inline void _add_row(const Model *m, float *x, int32_t row) noexcept nogil:
    """``hidden.addRow(wi, row)``: ``QuantMatrix::addRowToVector`` / ``DenseMatrix``'s."""
    cdef int k, n, d
    cdef float alpha
    cdef const uint8_t *code
    cdef const float *c
    cdef const ufloat *v
    if m.quantized:
        alpha = 1.0
        if m.qnorm:
            alpha = m.norm_centroids[m.norm_codes[row]]
        code = m.codes + <int64_t>m.nsubq * row
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
        v = m.dense + <int64_t>m.dim * row
        for n in range(m.dim):
            x[n] += v[n]


cdef float _dot_row(const Model *m, const float *x, int32_t i) noexcept nogil:
    """``Matrix::dotRow`` of output row ``i``: ``DenseMatrix``'s, or ``QuantMatrix``'s
    (``ProductQuantizer::mulcode`` times the row's norm)."""
    cdef float d = 0.0, alpha = 1.0
    cdef int j, k, n, w
    cdef const uint8_t *code
    cdef const float *c
    if not m.oquantized:
        c = m.wo + <int64_t>m.dim * i
        for j in range(m.dim):
            d += c[j] * x[j]
        return d
    if m.oqnorm:
        alpha = m.onorm_centroids[m.onorm_codes[i]]
    code = m.ocodes + <int64_t>m.onsubq * i
    w = m.odsub
    for k in range(m.onsubq):
        if k == m.onsubq - 1:
            w = m.olastdsub
            c = m.ocentroids + k * 256 * m.odsub + code[k] * m.olastdsub
        else:
            c = m.ocentroids + (k * 256 + code[k]) * m.odsub
        for n in range(w):
            d += x[k * m.odsub + n] * c[n]
    return d * alpha


cdef inline float _std_log(float x) noexcept nogil:
    return <float>log(<double>x + 1e-5)


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
    _dfs(m, floor, m.left[node], score + _std_log(one - f), hidden, out)
    _dfs(m, floor, m.right[node], score + _std_log(f), hidden, out)


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
    for j in range(m.dim):
        hidden[j] = 0.0
    for k in range(r.n):  # (each row was prefetched when it was found)
        _add_row(m, hidden, r.ids[k])
    scale = <float>(1.0 / <double>r.n)
    for j in range(m.dim):
        hidden[j] *= scale
    if m.loss == LOSS_HS:
        _dfs(m, _std_log(0.0), 2 * m.osz - 2, 0.0, hidden, out)
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
        out[j] = expf(_std_log(out[j]))


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
        cdef Py_ssize_t i, size = len(model.words)
        cdef uint32_t slot, tab_size
        cdef uint32_t[::1] wtab_view
        cdef uint32_t[::1] whash_view
        cdef const int8_t[::1] types_view
        cdef Prefix prefix
        cdef int32_t[::1] pkey_view, pval_view
        cdef const int32_t[::1] keys_view, values_view
        self._keep = []
        m.dim = model.dim
        m.row_bytes = 4 * model.dim
        m.minn = model.minn
        m.maxn = model.maxn
        m.nwords = model.nwords
        m.osz = model.nlabels
        self.nlabels = model.nlabels
        m.word_ngrams = model.word_ngrams
        m.loss = model.loss
        m.bucket = max(model.bucket, 0)
        if m.bucket > 0:
            q_magic(m.bucket, &m.magic_lo, &m.magic_hi)
        m.pruneidx_size = model.pruneidx_size
        label = bytes(model.label_prefix)
        self._keep.append(label)
        m.label = label
        m.label_len = len(label)

        # dictionary
        wbytes = b"".join(model.words)
        woff = np.zeros(size + 1, dtype=np.int64)
        woff[1:] = np.cumsum([len(word) for word in model.words])
        whash = np.array([_hash(word, len(word)) for word in model.words], dtype=np.uint32)
        tab_size = 1
        while tab_size < 2 * size + 2:
            tab_size *= 2
        wtab = np.full(8 * tab_size, 0xFFFFFFFF, dtype=np.uint32)
        wtab_view, whash_view = wtab, whash
        types_view = model.types
        m.wmask = tab_size - 1
        for i in range(size):
            slot = _mix(whash_view[i]) & m.wmask
            while wtab_view[8 * slot + 1] != <uint32_t>0xFFFFFFFFu:
                slot = (slot + 1) & m.wmask
            wtab_view[8 * slot] = whash_view[i]
            wtab_view[8 * slot + 1] = <uint32_t>i | (<uint32_t>(types_view[i] == 1) << 31)
            word = model.words[i]
            prefix = _prefix(word, len(word))
            memcpy(&wtab_view[8 * slot + 2], prefix.w, INLINE)
        wtype = np.ascontiguousarray(model.types, dtype=np.int8)
        self._keep += [wbytes, woff, wtab, wtype]
        m.wbytes = wbytes
        m.woff = <const int64_t *>_pointer(woff)
        m.wtab = <const uint32_t *>_pointer(wtab)
        m.wtype = <const int8_t *>_pointer(wtype)
        m.sub_off = m.sub_ids = NULL

        # pruned n-gram index
        keys = np.ascontiguousarray(model.prune_keys, dtype=np.int32)
        values = np.ascontiguousarray(model.prune_values, dtype=np.int32)
        tab_size = 1
        while tab_size < 2 * len(keys) + 2:
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
        self._keep += [pkey, pval]
        m.pkey = <const int32_t *>_pointer(pkey)
        m.pval = <const int32_t *>_pointer(pval)

        # input matrix: read where it is mapped
        inp = model.input
        if isinstance(inp, np.ndarray):
            if inp.dtype != np.dtype("<f4") or not inp.flags.c_contiguous:
                raise ValueError("input matrix not little-endian float32 rows")
            self._keep.append(inp)
            m.quantized = 0
            m.dense = <const ufloat *>_pointer(inp)
        else:
            m.quantized = 1
            m.row_bytes = inp.nsubq
            m.qnorm = inp.qnorm
            m.nsubq = inp.nsubq
            m.dsub = inp.dsub
            m.lastdsub = inp.lastdsub
            codes = np.ascontiguousarray(inp.codes, dtype=np.uint8)
            centroids = np.ascontiguousarray(inp.centroids, dtype=np.float32)
            self._keep += [codes, centroids]
            m.codes = <const uint8_t *>_pointer(codes)
            m.centroids = <const float *>_pointer(centroids)
            if inp.qnorm:
                norm_codes = np.ascontiguousarray(inp.norm_codes, dtype=np.uint8)
                norm_centroids = np.ascontiguousarray(inp.norm_centroids, dtype=np.float32)
                self._keep += [norm_codes, norm_centroids]
                m.norm_codes = <const uint8_t *>_pointer(norm_codes)
                m.norm_centroids = <const float *>_pointer(norm_centroids)

        # output matrix (a label's row each: small, copied aligned)
        out = model.output
        if isinstance(out, np.ndarray):
            m.oquantized = 0
            wo = np.ascontiguousarray(out, dtype=np.float32).copy()
            self._keep.append(wo)
            m.wo = <const float *>_pointer(wo)
        else:
            m.oquantized = 1
            m.oqnorm = out.qnorm
            m.onsubq = out.nsubq
            m.odsub = out.dsub
            m.olastdsub = out.lastdsub
            ocodes = np.ascontiguousarray(out.codes, dtype=np.uint8)
            ocentroids = np.ascontiguousarray(out.centroids, dtype=np.float32)
            self._keep += [ocodes, ocentroids]
            m.ocodes = <const uint8_t *>_pointer(ocodes)
            m.ocentroids = <const float *>_pointer(ocentroids)
            if out.qnorm:
                onorm_codes = np.ascontiguousarray(out.norm_codes, dtype=np.uint8)
                onorm_centroids = np.ascontiguousarray(out.norm_centroids, dtype=np.float32)
                self._keep += [onorm_codes, onorm_centroids]
                m.onorm_codes = <const uint8_t *>_pointer(onorm_codes)
                m.onorm_centroids = <const float *>_pointer(onorm_centroids)

        sigmoid = np.ascontiguousarray(sigmoid, dtype=np.float32)
        left = np.ascontiguousarray(left, dtype=np.int32)
        right = np.ascontiguousarray(right, dtype=np.int32)
        self._keep += [sigmoid, left, right]
        m.sigmoid = <const float *>_pointer(sigmoid)
        m.left = <const int32_t *>_pointer(left)
        m.right = <const int32_t *>_pointer(right)
        if m.maxn > 0:
            self._word_ngrams(model.words)
        self.hidden = <float *>malloc(max(m.dim, 1) * sizeof(float))
        if self.hidden == NULL:
            raise MemoryError()

    def _word_ngrams(self, list words):
        """``Dictionary::initNgrams``: each word's rows, itself then the character n-grams of
        ``<word>`` (none for ``</s>``), kept for the look-up."""
        cdef Py_ssize_t i, size = len(words)
        cdef Rows *r = &self.rows
        cdef int32_t[::1] off_view
        cdef const char *w
        offsets = np.zeros(size + 1, dtype=np.int32)
        off_view = offsets
        r.n = 0
        for i in range(size):
            word = <bytes>words[i]
            w = word
            if _grow(r, 1) < 0:
                raise MemoryError()
            r.ids[r.n] = <int32_t>i
            r.n += 1
            if word != b"</s>" and _bracketed_ngrams(&self.m, w, len(word), r) < 0:
                raise MemoryError()
            off_view[i + 1] = <int32_t>r.n
        ids = np.array(<int32_t[:max(r.n, 1)]>r.ids, dtype=np.int32)[: r.n].copy()
        self._keep += [offsets, ids]
        self.m.sub_off = <const int32_t *>_pointer(offsets)
        self.m.sub_ids = <const int32_t *>_pointer(ids)
        r.n = 0

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
