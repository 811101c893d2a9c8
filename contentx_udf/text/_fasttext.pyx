# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The look-up tables of the shared fastText core (``_fasttext.pxd``), built once per model from a
:class:`~contentx_udf.text.fasttext_file.FastTextFile`: the dictionary's open-addressing table,
the pruned n-gram index and its bucket bitmap, the input matrix where it is (mapped or not), and
each word's rows (``Dictionary::initNgrams``)."""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np


cdef const void *_pointer(object array):
    cdef size_t address = array.__array_interface__["data"][0]
    return <const void *>address


cdef QMatrix quantized_matrix(object q, list keep) except *:
    """The :struct:`QMatrix` of a :class:`~contentx_udf.text.fasttext_file.Quantized` (its arrays
    appended to ``keep``)."""
    cdef QMatrix out
    out.qnorm = q.qnorm
    out.nsubq = q.nsubq
    out.dsub = q.dsub
    out.lastdsub = q.lastdsub
    codes = np.ascontiguousarray(q.codes, dtype=np.uint8)
    centroids = np.ascontiguousarray(q.centroids, dtype=np.float32)
    keep += [codes, centroids]
    out.codes = <const uint8_t *>_pointer(codes)
    out.centroids = <const float *>_pointer(centroids)
    out.norm_codes = NULL
    out.norm_centroids = NULL
    if q.qnorm:
        norm_codes = np.ascontiguousarray(q.norm_codes, dtype=np.uint8)
        norm_centroids = np.ascontiguousarray(q.norm_centroids, dtype=np.float32)
        keep += [norm_codes, norm_centroids]
        out.norm_codes = <const uint8_t *>_pointer(norm_codes)
        out.norm_centroids = <const float *>_pointer(norm_centroids)
    return out


cdef class Tables:
    """A model's :struct:`Core`: ``Tables(model).core`` for a predictor to copy (holding this
    object, which owns the arrays it points into)."""

    def __init__(self, model):
        cdef Core *m = &self.core
        self._keep = []
        m.dim = model.dim
        m.row_bytes = 4 * model.dim
        m.minn = model.minn
        m.maxn = model.maxn
        m.nwords = model.nwords
        m.word_ngrams = model.word_ngrams
        m.bucket = max(model.bucket, 0)
        # (0 for 0 or 1 bucket: no n-gram is hashed, or every hash is 0 modulo 1)
        m.magic32 = <uint64_t>((2**64 - 1) // m.bucket + 1) if m.bucket > 1 else 0
        m.magic_lo = m.magic_hi = 0
        if m.bucket > 0:
            magic64(m.bucket, &m.magic_lo, &m.magic_hi)
        m.pruneidx_size = model.pruneidx_size
        label = bytes(model.label_prefix)
        self._keep.append(label)
        m.label = label
        m.label_len = len(label)
        self._dictionary(model.words, model.types)
        self._pruned(model.prune_keys, model.prune_values)
        inp = model.input
        if isinstance(inp, np.ndarray):
            dense = np.ascontiguousarray(inp, dtype="<f4")  # (a mapped matrix stays where it is)
            self._keep.append(dense)
            m.quantized = 0
            m.dense = <const ufloat *>_pointer(dense)
        else:
            m.quantized = 1
            m.row_bytes = inp.nsubq
            m.q = quantized_matrix(inp, self._keep)
        m.sub_off = m.sub_ids = NULL
        if m.maxn > 0:
            self._word_rows(model.words)

    def _dictionary(self, list words, types):
        """The open-addressing table of :func:`find_word` (8 uint32 a slot, load at most 1/2)."""
        cdef Core *m = &self.core
        cdef Py_ssize_t i, size = len(words)
        cdef uint32_t slot, tab_size = 1, h
        cdef uint32_t[::1] wtab_view
        cdef const int8_t[::1] types_view = np.ascontiguousarray(types, dtype=np.int8)
        cdef Prefix prefix
        cdef const char *w
        wbytes = b"".join(words)
        woff = np.zeros(size + 1, dtype=np.int64)
        woff[1:] = np.cumsum([len(word) for word in words])
        while tab_size < 2 * size + 2:
            tab_size *= 2
        wtab = np.full(8 * tab_size, 0xFFFFFFFF, dtype=np.uint32)
        wtab_view = wtab
        m.wmask = tab_size - 1
        for i in range(size):
            word = <bytes>words[i]
            w = word
            h = hash_bytes(w, len(word))
            slot = mix(h) & m.wmask
            while wtab_view[8 * slot + 1] != <uint32_t>0xFFFFFFFFu:
                slot = (slot + 1) & m.wmask
            wtab_view[8 * slot] = h
            wtab_view[8 * slot + 1] = <uint32_t>i | (<uint32_t>(types_view[i] == 1) << 31)
            prefix = word_prefix(w, len(word))
            memcpy(&wtab_view[8 * slot + 2], prefix.w, INLINE)
        self._keep += [wbytes, woff, wtab]
        m.wbytes = wbytes
        m.woff = <const int64_t *>_pointer(woff)
        m.wtab = <const uint32_t *>_pointer(wtab)

    def _pruned(self, prune_keys, prune_values):
        """The pruned n-gram index (bucket -> row - nwords, load at most 1/2: short probes on a
        miss, the usual case) and its bitmap of buckets."""
        cdef Core *m = &self.core
        cdef Py_ssize_t i
        cdef uint32_t slot, tab_size = 1
        cdef int32_t[::1] pkey_view, pval_view
        cdef const int32_t[::1] keys_view, values_view
        keys = np.ascontiguousarray(prune_keys, dtype=np.int32)
        values = np.ascontiguousarray(prune_values, dtype=np.int32)
        while tab_size < 2 * len(keys) + 2:
            tab_size *= 2
        pkey = np.full(tab_size, -1, dtype=np.int32)
        pval = np.full(tab_size, -1, dtype=np.int32)
        pkey_view, pval_view, keys_view, values_view = pkey, pval, keys, values
        m.pmask = tab_size - 1
        for i in range(len(keys)):
            slot = mix(<uint32_t>keys_view[i]) & m.pmask
            while pkey_view[slot] >= 0:
                slot = (slot + 1) & m.pmask
            pkey_view[slot] = keys_view[i]
            pval_view[slot] = values_view[i]
        buckets = int(m.bucket) if m.pruneidx_size > 0 else 0
        pbits = np.zeros(max(buckets, 1) // 64 + 1, dtype=np.uint64)
        kept = keys.astype(np.uint64)
        np.bitwise_or.at(pbits, kept >> np.uint64(6), np.uint64(1) << (kept & np.uint64(63)))
        self._keep += [pkey, pval, pbits]
        m.pkey = <const int32_t *>_pointer(pkey)
        m.pval = <const int32_t *>_pointer(pval)
        m.pbits = <const uint64_t *>_pointer(pbits)

    def _word_rows(self, list words):
        """``Dictionary::initNgrams``: each word's rows, itself then the character n-grams of
        ``<word>`` (none for ``</s>``)."""
        cdef Core *m = &self.core
        cdef Py_ssize_t i, size = len(words), total = 0
        cdef int32_t[::1] ids_view, off_view
        cdef char *scratch
        cdef const char *w
        offsets = np.zeros(size + 1, dtype=np.int32)
        ids = np.zeros(sum(1 + (len(word) + 2) * m.maxn for word in words), dtype=np.int32)
        ids_view, off_view = ids, offsets
        scratch = <char *>malloc(max([len(word) for word in words], default=0) + 3)
        if scratch == NULL:
            raise MemoryError()
        try:
            for i in range(size):
                word = <bytes>words[i]
                w = word
                ids_view[total] = <int32_t>i
                total += 1
                if word != b"</s>":
                    scratch[0] = b'<'
                    memcpy(scratch + 1, w, len(word))
                    scratch[len(word) + 1] = b'>'
                    total += subwords(m, scratch, len(word) + 2, NULL, &ids_view[total])
                off_view[i + 1] = <int32_t>total
        finally:
            free(scratch)
        ids = ids[:total].copy()
        self._keep += [offsets, ids]
        m.sub_off = <const int32_t *>_pointer(offsets)
        m.sub_ids = <const int32_t *>_pointer(ids)
