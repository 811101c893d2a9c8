# cython: language_level=3
"""The compiled core both fastText predictors share (:mod:`._lid`, the language identifier, and
:mod:`._quality`, the quality classifiers): fastText's (0.9.x, src/) dictionary look-up, its
n-gram hashing and pruned index, and the input matrix's row sums, each written once.

Everything on the hot path is ``cdef inline`` here, so each predictor compiles it into its own
loops (no call across modules per token or row); :class:`Tables` (``_fasttext.pyx``) builds the
look-up tables from a :class:`~contentx_udf.text.fasttext_file.FastTextFile` once per model.
"""

from libc.math cimport log
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy


cdef extern from *:
    """
    /* a float read at any address (a mapped model's input matrix sits where its dictionary ends) */
    typedef float ft_ufloat __attribute__((aligned(1)));
    static inline void ft_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
    /* a row of `bytes` bytes: every cache line it spans, into all the caches */
    static inline void ft_prefetch_row(const void *p, long bytes) {
        const char *c = (const char *)p;
        long k;
        for (k = 0; k < bytes; k += 64) __builtin_prefetch(c + k, 0, 3);
        __builtin_prefetch(c + bytes - 1, 0, 3);
    }
    /* the high 64 bits of a 64 x 32-bit product (h % d of a 32-bit h: ft_mod32) */
    static inline uint32_t ft_mulhi32(uint64_t low, uint32_t d) {
        return (uint32_t)(((unsigned __int128)low * d) >> 64);
    }
    /* h % d for a 64-bit h (Lemire's fastmod_u64): M = 2**128 / d rounded up */
    static inline uint64_t ft_mod64(uint64_t h, uint64_t m_lo, uint64_t m_hi, uint64_t d) {
        __uint128_t M = ((__uint128_t)m_hi << 64) | m_lo;
        __uint128_t low = M * h;
        __uint128_t bottom = ((low & 0xFFFFFFFFFFFFFFFFULL) * (__uint128_t)d) >> 64;
        __uint128_t top = (low >> 64) * (__uint128_t)d;
        return (uint64_t)((bottom + top) >> 64);
    }
    static inline void ft_magic64(uint64_t d, uint64_t *lo, uint64_t *hi) {
        __uint128_t M = ((__uint128_t)-1) / d + 1;
        *lo = (uint64_t)M; *hi = (uint64_t)(M >> 64);
    }
    """
    ctypedef float ufloat "ft_ufloat"
    void prefetch "ft_prefetch"(const void *p) nogil
    void prefetch_row "ft_prefetch_row"(const void *p, long bytes) nogil
    uint32_t mulhi32 "ft_mulhi32"(uint64_t low, uint32_t d) nogil
    uint64_t mod64 "ft_mod64"(uint64_t h, uint64_t m_lo, uint64_t m_hi, uint64_t d) nogil
    void magic64 "ft_magic64"(uint64_t d, uint64_t *lo, uint64_t *hi) nogil


cdef enum:
    INLINE = 24  # bytes of a word kept in its dictionary slot


# A ``QuantMatrix`` (src/quantmatrix.cc): ``nsubq`` one-byte codes a row into ``centroids``, each
# row scaled by ``norm_centroids[norm_codes[row]]`` with ``qnorm``.
cdef struct QMatrix:
    int qnorm
    int nsubq
    int dsub
    int lastdsub
    const uint8_t *codes
    const float *centroids
    const uint8_t *norm_codes
    const float *norm_centroids


# A model's dictionary, its n-gram buckets and its input matrix (:class:`Tables`).
cdef struct Core:
    int dim
    long row_bytes  # bytes of an input row (dense: dim floats; quantized: its codes)
    int minn
    int maxn
    int nwords
    int word_ngrams
    uint32_t bucket
    uint64_t magic32  # ceil(2**64 / bucket): h % bucket of a 32-bit h (mod32)
    uint64_t magic_lo  # 2**128 / bucket rounded up: of a 64-bit h (mod64)
    uint64_t magic_hi
    int64_t pruneidx_size
    # the dictionary: open addressing on the FNV-1a hash, 8 uint32 a slot: the hash, the id (its
    # top bit set for a label; 0xFFFFFFFF: empty), the word's first INLINE bytes (zero-padded)
    const uint32_t *wtab
    uint32_t wmask
    const int64_t *woff
    const char *wbytes
    # each word's rows (itself, then its character n-grams); NULL when maxn is 0
    const int32_t *sub_off
    const int32_t *sub_ids
    const char *label
    int label_len
    # the pruned n-gram index of a quantized model: bucket -> row - nwords, and one bit per bucket
    # set where the index holds it (most n-grams miss)
    const int32_t *pkey
    const int32_t *pval
    uint32_t pmask
    const uint64_t *pbits
    # the input matrix: dense rows read where they are (possibly unaligned), or quantized
    int quantized
    const ufloat *dense
    QMatrix q


# The arrays behind a Core (kept alive as long as it is used).
cdef class Tables:
    cdef Core core
    cdef list _keep


cdef QMatrix quantized_matrix(object q, list keep) except *


cdef struct Prefix:
    uint64_t w[3]


cdef inline uint32_t fnv(uint32_t h, char c) noexcept nogil:
    """One byte of FNV-1a as fastText hashes (the byte sign-extended, ``uint32_t(int8_t(c))``)."""
    return (h ^ <uint32_t><int32_t><int8_t>c) * <uint32_t>16777619


cdef inline uint32_t hash_bytes(const char *s, Py_ssize_t n) noexcept nogil:
    """``Dictionary::hash``."""
    cdef uint32_t h = <uint32_t>2166136261
    cdef Py_ssize_t i
    for i in range(n):
        h = fnv(h, s[i])
    return h


cdef inline uint32_t mix(uint32_t h) noexcept nogil:
    """The slot of a hash in the open-addressing tables."""
    return (h * <uint32_t>2654435761) ^ (h >> 16)


cdef inline uint32_t mod32(const Core *m, uint32_t h) noexcept nogil:
    """``h % bucket``, exact for every 32-bit ``h`` (Lemire, Kaser & Kurz, "Faster remainder by
    direct computation", 2019): the low 64 bits of ``magic * h`` times ``bucket``, high half."""
    return mulhi32(m.magic32 * h, m.bucket)


cdef inline float std_log(float x) noexcept nogil:
    """``std_log`` of src/loss.cc: ``log(x + 1e-5)``."""
    return <float>log(<double>x + 1e-5)


cdef inline Prefix word_prefix(const char *w, Py_ssize_t n) noexcept nogil:
    """The first :data:`INLINE` bytes of ``w``, zero-padded (no token or word holds a NUL)."""
    cdef Prefix p
    p.w[0] = p.w[1] = p.w[2] = 0
    memcpy(p.w, w, min(n, INLINE))
    return p


cdef inline int32_t find_word(const Core *m, const char *w, Py_ssize_t n, uint32_t h,
                              int8_t *kind) noexcept nogil:
    """``Dictionary::find``: the id of the word ``w`` of hash ``h`` (its type, 1 for a label, in
    ``kind``), or -1.  A slot (32 bytes) holds the hash, the id and the word's first 24 bytes: a
    word of 24 bytes or fewer is found with one memory access."""
    cdef uint32_t slot = mix(h) & m.wmask
    cdef uint32_t wid
    cdef Prefix p = word_prefix(w, n)
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


cdef inline int32_t ngram_row(const Core *m, uint32_t id) noexcept nogil:
    """``Dictionary::pushHash``: the input row of n-gram bucket ``id``, or -1 (none, or pruned
    away).  lid.176 keeps 42,765 of its 2,000,000 buckets and most n-grams of a text fall outside
    them: the bucket bitmap answers those without probing the table."""
    cdef uint32_t slot
    cdef int32_t key
    if m.pruneidx_size == 0:
        return -1
    if m.pruneidx_size < 0:
        return m.nwords + <int32_t>id
    if not (m.pbits[id >> 6] >> (id & 63)) & 1:
        return -1
    slot = mix(id) & m.pmask
    while True:
        key = m.pkey[slot]
        if key < 0:
            return -1
        if <uint32_t>key == id:
            return m.nwords + m.pval[slot]
        slot = (slot + 1) & m.pmask


cdef inline const void *row_address(const Core *m, int32_t row) noexcept nogil:
    if m.quantized:
        return m.q.codes + <int64_t>m.q.nsubq * row
    return m.dense + <int64_t>m.dim * row


cdef inline const float *centroid(const QMatrix *q, const uint8_t *code, int k, int *width) noexcept nogil:
    """The centroid of sub-vector ``k`` of the row of ``code`` (``ProductQuantizer::get_centroids``),
    its ``width`` floats (``dsub``, ``lastdsub`` for the last)."""
    if k == q.nsubq - 1:
        width[0] = q.lastdsub
        return q.centroids + k * 256 * q.dsub + code[k] * q.lastdsub
    width[0] = q.dsub
    return q.centroids + (k * 256 + code[k]) * q.dsub


cdef inline void add_row(const Core *m, float *x, int32_t row) noexcept nogil:
    """``hidden.addRow(wi, row)``: ``QuantMatrix::addRowToVector`` (``ProductQuantizer::addcode``,
    ``norm * centroid`` per sub-vector) or ``DenseMatrix``'s, one float32 addition an element."""
    cdef int k, n, d
    cdef float alpha
    cdef const uint8_t *code
    cdef const float *c
    cdef const ufloat *v
    if m.quantized:
        alpha = 1.0
        if m.q.qnorm:
            alpha = m.q.norm_centroids[m.q.norm_codes[row]]
        code = m.q.codes + <int64_t>m.q.nsubq * row
        if m.q.dsub == 2 and m.q.lastdsub == 2:  # lid.176: the same sums, unrolled by the compiler
            for k in range(m.q.nsubq):
                c = m.q.centroids + (k * 256 + code[k]) * 2
                x[2 * k] += alpha * c[0]
                x[2 * k + 1] += alpha * c[1]
            return
        for k in range(m.q.nsubq):
            c = centroid(&m.q, code, k, &d)
            for n in range(d):
                x[k * m.q.dsub + n] += alpha * c[n]
    else:
        v = m.dense + <int64_t>m.dim * row
        for n in range(m.dim):
            x[n] += v[n]


cdef inline Py_ssize_t subwords(const Core *m, const char *w, Py_ssize_t size, float *x,
                                int32_t *out) noexcept nogil:
    """``Dictionary::computeSubwords`` of the bracketed word ``w`` (``minn``..``maxn`` UTF-8
    characters, hashed modulo ``bucket``, kept only when the pruned index holds them): each kept
    n-gram's row is written to ``out``, or (``out`` NULL) added to ``x``; returns how many."""
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
            h = fnv(h, w[j])
            j += 1
            while j < size and (w[j] & 0xC0) == 0x80:
                h = fnv(h, w[j])
                j += 1
            if n >= m.minn and not (n == 1 and (i == 0 or j == size)):
                row = ngram_row(m, mod32(m, h))
                if row >= 0:
                    if out != NULL:
                        out[count] = row
                    else:
                        add_row(m, x, row)
                    count += 1
            n += 1
    return count


cdef inline float dot(const float *a, const float *b, int n) noexcept nogil:
    """``Vector`` · ``DenseMatrix`` row: summed in float32, in order."""
    cdef float d = 0.0
    cdef int j
    for j in range(n):
        d += a[j] * b[j]
    return d
