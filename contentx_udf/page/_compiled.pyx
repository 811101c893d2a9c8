# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled passes of the DOM view and of ``combined`` (see :mod:`contentx_udf.page.compiled`).

* :func:`walk`: one pre-order pass over a Lexbor subtree into the node arrays of
  :class:`~contentx_udf.page.document.DomArrays` (tag id, parent, subtree end, depth, parent's
  node id), comments left out, at most ``max_nodes`` nodes: what ``flatten_dom``'s Python loop
  over ``traverse(include_text=True)`` builds.
* :func:`attribute_keys`: the same walk reading the ``class``, ``id``, ``role``, ``itemprop`` and
  ``itemtype`` attributes of every element: the keyword bit set of their values (looked up in a
  per-process cache keyed by the values' bytes; computed by a Python function on a miss, so the
  keyword rules stay in one place) and a 32-bit hash of the class value.
* :func:`tree_scores`: the sum of an oblivious tree ensemble's leaf values for every row.
* :func:`utf8_check`, :func:`find_all`, :func:`noscript_tags`, :func:`nesting_within`: the page's bytes checked as
  UTF-8, searched and bounded before (or instead of) decoding them.
* :func:`block_runs`, :func:`block_texts`, :func:`text_counts`, :func:`non_space_chars`: the blocks
  of a page and the counts of its texts.

Lexbor is reached through the functions selectolax's extension exports (its ``*_noi`` accessors,
looked up once with ``dlsym``) on the node address selectolax reports as ``mem_id``: no Lexbor
header and no struct layout is compiled in.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.math cimport INFINITY
from libc.string cimport memchr, memcmp, memcpy, memset

import numpy as np


cdef extern from "<dlfcn.h>" nogil:
    void *dlopen(const char *filename, int flags)
    void *dlsym(void *handle, const char *symbol)
    int RTLD_LAZY
    int RTLD_NOLOAD


ctypedef void *(*node_step_f)(void *) noexcept nogil
ctypedef uintptr_t (*node_tag_f)(void *) noexcept nogil
ctypedef const unsigned char *(*attr_str_f)(void *, size_t *) noexcept nogil

cdef node_step_f _first_child = NULL
cdef node_step_f _next_sibling = NULL
cdef node_step_f _parent = NULL
cdef node_tag_f _tag_id = NULL
cdef node_tag_f _node_type = NULL
cdef node_step_f _first_attribute = NULL
cdef node_step_f _next_attribute = NULL
cdef attr_str_f _attr_name = NULL
cdef attr_str_f _attr_value = NULL
ctypedef void (*node_remove_f)(void *) noexcept nogil
cdef node_remove_f _node_remove = NULL
ctypedef unsigned char *(*text_content_f)(void *, size_t *) noexcept nogil
cdef text_content_f _text_content = NULL

#: Lexbor tag ids of text nodes and comments (``LXB_TAG__TEXT``, ``LXB_TAG__EM_COMMENT``).
cdef uintptr_t TEXT_TAG = 2
cdef uintptr_t COMMENT_TAG = 4


def bind(str library_path):
    """Look Lexbor's accessors up in selectolax's loaded extension (``library_path``); raises
    ``OSError`` when one is missing."""
    global _first_child, _next_sibling, _parent, _tag_id, _node_type
    global _first_attribute, _next_attribute, _attr_name, _attr_value
    cdef bytes path = library_path.encode()
    cdef void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD)
    if handle == NULL:
        raise OSError(f"selectolax's extension {library_path} is not loaded")
    cdef void *found[9]
    names = (
        b"lxb_dom_node_first_child_noi", b"lxb_dom_node_next_noi", b"lxb_dom_node_parent_noi",
        b"lxb_dom_node_tag_id_noi", b"lxb_dom_element_first_attribute_noi",
        b"lxb_dom_element_next_attribute_noi", b"lxb_dom_attr_local_name_noi", b"lxb_dom_attr_value_noi",
        b"lxb_dom_node_type_noi",
    )
    cdef int i
    for i in range(9):
        found[i] = dlsym(handle, <const char *> names[i])
        if found[i] == NULL:
            raise OSError(f"selectolax's extension does not export {names[i].decode()}")
    _first_child = <node_step_f> found[0]
    _next_sibling = <node_step_f> found[1]
    _parent = <node_step_f> found[2]
    _tag_id = <node_tag_f> found[3]
    _first_attribute = <node_step_f> found[4]
    _next_attribute = <node_step_f> found[5]
    _attr_name = <attr_str_f> found[6]
    _attr_value = <attr_str_f> found[7]
    _node_type = <node_tag_f> found[8]
    global _node_remove
    cdef void *remove = dlsym(handle, b"lxb_dom_node_remove")
    if remove == NULL:
        raise OSError("selectolax's extension does not export lxb_dom_node_remove")
    _node_remove = <node_remove_f> remove
    global _text_content
    cdef void *text_content = dlsym(handle, b"lxb_dom_node_text_content")
    if text_content == NULL:
        raise OSError("selectolax's extension does not export lxb_dom_node_text_content")
    _text_content = <text_content_f> text_content


cdef inline void *_next_in_order(void *node, void *root) noexcept nogil:
    """The node after ``node`` in pre-order within ``root``'s subtree (NULL at its end)."""
    cdef void *nxt = _first_child(node)
    if nxt != NULL:
        return nxt
    while node != root:
        nxt = _next_sibling(node)
        if nxt != NULL:
            return nxt
        node = _parent(node)
    return NULL


cdef struct Grow:
    int64_t *data
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _push(Grow *g, int64_t value) except -1 nogil:
    cdef int64_t *bigger
    if g.size == g.capacity:
        g.capacity = g.capacity * 2 if g.capacity else 1024
        bigger = <int64_t *> realloc(g.data, g.capacity * sizeof(int64_t))
        if bigger == NULL:
            with gil:
                raise MemoryError()
        g.data = bigger
    g.data[g.size] = value
    g.size += 1
    return 0


cdef inline void _init(Grow *g) noexcept nogil:
    g.data = NULL
    g.size = 0
    g.capacity = 0


cdef object _to_array(Grow *g):
    out = np.empty(g.size, dtype=np.int64)
    cdef int64_t[::1] view = out
    if g.size:
        memcpy(&view[0], g.data, g.size * sizeof(int64_t))
    return out


cdef inline void *_advance(void *node, void *root, Grow *stack_nodes, Grow *stack_index,
                           int64_t *ends, int64_t count) noexcept nogil:
    """The next node in pre-order after ``node``'s subtree (NULL at the end of ``root``'s),
    closing the open elements left on the way up (their subtree ends at ``count``)."""
    cdef void *sibling
    while node != root:
        sibling = _next_sibling(node)
        if sibling != NULL:
            return sibling
        if stack_nodes.size == 0:
            return NULL
        stack_nodes.size -= 1
        stack_index.size -= 1
        ends[stack_index.data[stack_index.size]] = count
        node = <void *> <uintptr_t> stack_nodes.data[stack_nodes.size]
    return NULL


def walk(size_t root_address, Py_ssize_t max_nodes):
    """``(tag_id, parent, end, depth, parent_mem, truncated)`` of the first ``max_nodes`` nodes
    (comments left out) of the subtree at ``root_address``, in pre-order; ``truncated`` when more
    nodes follow.  ``parent_mem`` is the Lexbor address of each node's parent (-1 for the root)."""
    return _walk(root_address, max_nodes, False)[:6]


def walk_texts(size_t root_address, Py_ssize_t max_nodes):
    """:func:`walk` and, as a seventh item, the text of every text node in document order (its
    character data, decoded as UTF-8): what ``text(separator="\\x00")`` of the root split on NULs
    gives, without building and splitting the joined text.  None instead of the list when that
    could differ: a text node without data (Lexbor's text walk skips it), one holding a NUL or
    invalid UTF-8, or a truncated walk."""
    return _walk(root_address, max_nodes, True)


cdef tuple _walk(size_t root_address, Py_ssize_t max_nodes, bint with_texts):
    if _first_child == NULL:
        raise OSError("bind() was not called")
    cdef list texts = [] if with_texts else None
    cdef const unsigned char *data
    cdef size_t length
    cdef void *root = <void *> root_address
    cdef void *node = root
    cdef void *child
    cdef Grow tags, parents, ends, depths, parent_mem, stack_nodes, stack_index
    _init(&tags); _init(&parents); _init(&ends); _init(&depths); _init(&parent_mem)
    _init(&stack_nodes); _init(&stack_index)
    cdef int64_t count = 0
    cdef bint truncated = False
    cdef uintptr_t tag
    try:
        while node != NULL:
            tag = _tag_id(node)
            if tag != COMMENT_TAG:
                if count == max_nodes:
                    truncated = True
                    break
                _push(&tags, <int64_t> tag)
                if stack_index.size:
                    _push(&parents, stack_index.data[stack_index.size - 1])
                    _push(&parent_mem, stack_nodes.data[stack_nodes.size - 1])
                else:
                    _push(&parents, -1)
                    _push(&parent_mem, -1)
                _push(&depths, stack_index.size)
                _push(&ends, count + 1)
                count += 1
                if tag == TEXT_TAG and texts is not None:
                    data = _text_content(node, &length)
                    if data == NULL or memchr(data, 0, length) != NULL:
                        texts = None
                    else:
                        try:
                            texts.append(PyUnicode_DecodeUTF8(<const char *> data, length, NULL))
                        except UnicodeDecodeError:
                            texts = None
                child = _first_child(node)
                if child != NULL:
                    _push(&stack_nodes, <int64_t> <uintptr_t> node)
                    _push(&stack_index, count - 1)
                    node = child
                    continue
            elif node == root:
                break
            node = _advance(node, root, &stack_nodes, &stack_index, ends.data, count)
        while stack_index.size:  # truncated: the open elements end at the cut
            stack_index.size -= 1
            ends.data[stack_index.data[stack_index.size]] = count
        return (
            _to_array(&tags), _to_array(&parents), _to_array(&ends), _to_array(&depths),
            _to_array(&parent_mem), truncated, None if truncated else texts,
        )
    finally:
        free(tags.data); free(parents.data); free(ends.data); free(depths.data)
        free(parent_mem.data); free(stack_nodes.data); free(stack_index.data)


def first_text_of(size_t root_address, uintptr_t tag):
    """The text of the first element (pre-order, ``root`` included) with the Lexbor tag id ``tag``
    in the subtree at ``root_address``: the data of its text nodes joined, decoded as UTF-8 with
    "replace" (selectolax's ``text()`` of the first node ``tags(name)`` finds); None without one."""
    if _first_child == NULL:
        raise OSError("bind() was not called")
    cdef void *root = <void *> root_address
    cdef void *node = root
    while node != NULL and not (_tag_id(node) == tag and _node_type(node) == 1):
        node = _next_in_order(node, root)
    if node == NULL:
        return None
    cdef void *top = node
    cdef const unsigned char *data
    cdef size_t length
    cdef bytearray joined = bytearray()
    node = _first_child(top)
    if node == NULL:
        return ""
    while node != NULL:
        if _tag_id(node) == TEXT_TAG:
            data = _text_content(node, &length)
            if data != NULL:
                joined += (<const char *> data)[:length]
        node = _next_in_order(node, top)
    return joined.decode("utf-8", "replace")


cdef int ELEMENT_NODE = 1
#: The attributes read for keywords, in the order their values are joined (class first).
cdef const char *ATTRIBUTE_NAMES[5]
ATTRIBUTE_NAMES[0] = b"class"
ATTRIBUTE_NAMES[1] = b"id"
ATTRIBUTE_NAMES[2] = b"role"
ATTRIBUTE_NAMES[3] = b"itemprop"
ATTRIBUTE_NAMES[4] = b"itemtype"
cdef size_t ATTRIBUTE_LENGTHS[5]
ATTRIBUTE_LENGTHS[:] = [5, 2, 4, 8, 8]


#: Keyword tables (set_keywords), C arrays: the words matched inside a token, sorted by first
#: byte (those starting with byte ``c`` are ``_inside[_inside_start[c]:_inside_start[c + 1]]``),
#: and the words a token must equal; each with its group bits.
DEF KEYWORD_MAX = 32
cdef struct Keyword:
    unsigned char word[KEYWORD_MAX]
    Py_ssize_t length
    uint64_t bits
cdef Keyword *_inside = NULL
cdef Py_ssize_t _inside_start[257]
cdef Keyword *_exact = NULL
cdef Py_ssize_t _exact_count = 0
cdef bint _keywords_set = False


cdef Keyword *_keyword_array(list pairs) except NULL:
    """``pairs`` (word, bits) as a C array (at least one entry allocated)."""
    cdef Keyword *table = <Keyword *> calloc(len(pairs) + 1, sizeof(Keyword))
    cdef Py_ssize_t k
    cdef bytes word
    if table == NULL:
        raise MemoryError()
    for k, (word, bits) in enumerate(pairs):
        if not 0 < len(word) <= KEYWORD_MAX:
            free(table)
            raise ValueError(f"keyword {word!r}: 1 to {KEYWORD_MAX} bytes")
        memcpy(table[k].word, <const char *> word, len(word))
        table[k].length = len(word)
        table[k].bits = <uint64_t> bits
    return table


def set_keywords(inside, exact):
    """The keyword tables of :func:`attribute_keys`'s own look-up: ``inside`` the (word, bits)
    pairs matched anywhere in a token, ``exact`` the (word, bits) pairs matched by a whole token
    (ASCII words, lower case)."""
    global _inside, _exact, _exact_count, _keywords_set
    inside_pairs = sorted(((bytes(w), int(b)) for w, b in inside), key=lambda pair: pair[0][0])
    exact_pairs = [(bytes(w), int(b)) for w, b in exact]
    cdef Keyword *new_inside = _keyword_array(inside_pairs)
    cdef Keyword *new_exact
    try:
        new_exact = _keyword_array(exact_pairs)
    except BaseException:
        free(new_inside)
        raise
    cdef Py_ssize_t c, k = 0
    for c in range(257):
        while k < len(inside_pairs) and inside_pairs[k][0][0] < c:
            k += 1
        _inside_start[c] = k
    free(_inside)
    free(_exact)
    _inside, _exact, _exact_count = new_inside, new_exact, len(exact_pairs)
    _keywords_set = True
    if _keys != NULL:
        _keys_clear()  # (bits of the old tables)


cdef uint64_t _token_bits(const unsigned char *token, Py_ssize_t length) noexcept nogil:
    """The group bits of one token: the exact words it equals, the inside words it contains."""
    cdef uint64_t bits = 0
    cdef Py_ssize_t p, k
    cdef const Keyword *word
    for k in range(_exact_count):
        word = &_exact[k]
        if word.length == length and memcmp(word.word, token, length) == 0:
            bits |= word.bits
    for p in range(length):
        for k in range(_inside_start[token[p]], _inside_start[token[p] + 1]):
            word = &_inside[k]
            if word.length <= length - p and memcmp(word.word, token + p, word.length) == 0:
                bits |= word.bits
    return bits


cdef inline bint _token_byte(unsigned char c) noexcept nogil:
    return (97 <= c <= 122) or (48 <= c <= 57)


cdef object _ascii_value_bits(const unsigned char *key, Py_ssize_t length, unsigned char *lowered):
    """The keyword bits of an attribute values key, or None when it is not ASCII (Python's
    ``lower()`` then decides: a few non-ASCII letters lower to ASCII ones)."""
    cdef Py_ssize_t i, start
    cdef unsigned char c
    for i in range(length):
        c = key[i]
        if c >= 128:
            return None
        lowered[i] = c + 32 if 65 <= c <= 90 else c
    cdef uint64_t bits = 0
    i = 0
    while i < length:
        if not _token_byte(lowered[i]):
            i += 1
            continue
        start = i
        while i < length and _token_byte(lowered[i]):
            i += 1
        bits |= _token_bits(lowered + start, i - start)
    return bits


cdef uint32_t _class_hash(const unsigned char *data, size_t length) noexcept nogil:
    """FNV-1a (64 bits) of the class value folded to 32 bits; 0 only for no class."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef size_t i
    for i in range(length):
        h = (h ^ data[i]) * 1099511628211ULL
    h ^= h >> 32
    return <uint32_t> h if <uint32_t> h != 0 else 1


cdef struct KeyEntry:
    uint64_t hash  # 0: an empty slot
    char *key
    size_t length
    uint64_t bits


#: :func:`attribute_keys`'s cache: the keyword bits of every attribute values key seen (open
#: addressing, keyed by the key's bytes), emptied when it holds ``cache_size`` keys and when the
#: keyword tables change.
cdef KeyEntry *_keys = NULL
cdef size_t _keys_capacity = 0
cdef size_t _keys_size = 0


cdef inline uint64_t _bytes_hash(const unsigned char *data, size_t n) noexcept nogil:
    """A 64-bit hash of ``data[:n]`` read 8 bytes at a time (never 0)."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ n, word
    cdef size_t i = 0
    while i + 8 <= n:
        memcpy(&word, data + i, 8)
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 32
        i += 8
    word = 0
    memcpy(&word, data + i, n - i)
    h = (h ^ word) * 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 29
    return h | 1


cdef inline KeyEntry *_keys_slot(const char *key, size_t n, uint64_t h) noexcept nogil:
    """The entry of ``key``, or the empty slot where it goes."""
    cdef size_t mask = _keys_capacity - 1, j = (h >> 3) & mask
    cdef KeyEntry *entry
    while True:
        entry = &_keys[j]
        if entry.hash == 0 or (entry.hash == h and entry.length == n and memcmp(entry.key, key, n) == 0):
            return entry
        j = (j + 1) & mask


cdef void _keys_clear() noexcept nogil:
    global _keys_size
    cdef size_t j
    for j in range(_keys_capacity):
        if _keys[j].hash:
            free(_keys[j].key)
    if _keys_capacity:
        memset(_keys, 0, _keys_capacity * sizeof(KeyEntry))
    _keys_size = 0


def clear_key_cache():
    """Empties :func:`attribute_keys`'s cache (benchmarks of a cold cache)."""
    if _keys != NULL:
        _keys_clear()


cdef int _keys_grow() except -1:
    """Doubles the table (at least 4,096 slots), moving the entries."""
    global _keys, _keys_capacity
    cdef size_t old_capacity = _keys_capacity, j
    cdef KeyEntry *old = _keys
    cdef size_t capacity = old_capacity * 2 if old_capacity else 4096
    cdef KeyEntry *table = <KeyEntry *> calloc(capacity, sizeof(KeyEntry))
    if table == NULL:
        raise MemoryError()
    _keys, _keys_capacity = table, capacity
    for j in range(old_capacity):
        if old[j].hash:
            _keys_slot(old[j].key, old[j].length, old[j].hash)[0] = old[j]
    free(old)
    return 0


def attribute_keys(
    size_t root_address, Py_ssize_t nodes, object miss, Py_ssize_t cache_size,
    const unsigned char[::1] wanted=None,
):
    """``(bits, class_hash)`` over the first ``nodes`` nodes of :func:`walk`'s order: for each
    element, the keyword bits of ``key``, its non-empty ``class``, ``id``, ``role``, ``itemprop``
    and ``itemtype`` values joined by a space (0 without any), and the hash of its class value (0
    without one).  A key not in the cache (``_keys``: its bytes, not a ``bytes`` object and a dict
    look-up per element) gets its bits from the keyword tables (:func:`set_keywords`) when it is
    ASCII, else from ``miss(key)`` (``key`` as bytes); it is stored (the cache is emptied when it
    holds ``cache_size`` keys).  With ``wanted`` (a flag per node) only the flagged elements are
    read (the others keep 0 and 0)."""
    if not _keywords_set:
        raise RuntimeError("set_keywords() was not called")
    if _first_child == NULL:
        raise OSError("bind() was not called")
    bits_out = np.zeros(nodes, dtype=np.uint64)
    hash_out = np.zeros(nodes, dtype=np.int64)
    cdef uint64_t[::1] bits = bits_out
    cdef int64_t[::1] hashes = hash_out
    cdef void *root = <void *> root_address
    cdef void *node = root
    cdef void *attr
    cdef void *child
    cdef Py_ssize_t count = 0
    cdef const unsigned char *name
    cdef const unsigned char *value
    cdef const unsigned char *values[5]
    cdef size_t lengths[5]
    cdef size_t length, total
    cdef int k
    cdef char *key_buffer = NULL
    cdef size_t key_capacity = 0
    cdef char *lowered = NULL
    cdef size_t lowered_capacity = 0
    cdef char *bigger
    cdef KeyEntry *entry
    cdef uint64_t key_hash
    global _keys_size
    if _keys == NULL:
        _keys_grow()
    try:
        while node != NULL and count < nodes:
            if _tag_id(node) != COMMENT_TAG:
                if _node_type(node) == ELEMENT_NODE and (wanted is None or wanted[count]):
                    for k in range(5):
                        lengths[k] = 0
                    attr = _first_attribute(node)
                    while attr != NULL:
                        name = _attr_name(attr, &length)
                        if name != NULL:
                            for k in range(5):
                                if length == ATTRIBUTE_LENGTHS[k] and memcmp(name, ATTRIBUTE_NAMES[k], length) == 0:
                                    value = _attr_value(attr, &lengths[k])
                                    if value == NULL:
                                        lengths[k] = 0
                                    values[k] = value
                                    break
                        attr = _next_attribute(attr)
                    total = 0
                    for k in range(5):
                        if lengths[k]:
                            total += lengths[k] + 1
                    if total:
                        if total > key_capacity:
                            bigger = <char *> realloc(key_buffer, total)
                            if bigger == NULL:
                                raise MemoryError()
                            key_buffer, key_capacity = bigger, total
                        length = 0
                        for k in range(5):
                            if lengths[k]:
                                if length:
                                    key_buffer[length] = 32  # " "
                                    length += 1
                                memcpy(key_buffer + length, values[k], lengths[k])
                                length += lengths[k]
                        key_hash = _bytes_hash(<const unsigned char *> key_buffer, length)
                        entry = _keys_slot(key_buffer, length, key_hash)
                        if entry.hash:
                            bits[count] = entry.bits
                        else:
                            if length > lowered_capacity:
                                bigger = <char *> realloc(lowered, length)
                                if bigger == NULL:
                                    raise MemoryError()
                                lowered, lowered_capacity = bigger, length
                            value_bits = _ascii_value_bits(
                                <const unsigned char *> key_buffer, length, <unsigned char *> lowered
                            )
                            if value_bits is None:
                                value_bits = miss(PyBytes_FromStringAndSize(key_buffer, length))
                            bits[count] = <uint64_t> value_bits
                            if <Py_ssize_t> _keys_size >= cache_size:
                                _keys_clear()
                            if (_keys_size + 1) * 2 > _keys_capacity:
                                _keys_grow()
                            entry = _keys_slot(key_buffer, length, key_hash)
                            entry.key = <char *> malloc(length)
                            if entry.key == NULL:
                                raise MemoryError()
                            memcpy(entry.key, key_buffer, length)
                            entry.length = length
                            entry.bits = bits[count]
                            entry.hash = key_hash
                            _keys_size += 1
                        if lengths[0]:
                            hashes[count] = _class_hash(values[0], lengths[0])
                count += 1
            child = _first_child(node)
            if child != NULL:
                node = child
                continue
            while node != root:
                if _next_sibling(node) != NULL:
                    break
                node = _parent(node)
            if node == root:
                break
            node = _next_sibling(node)
        return bits_out, hash_out
    finally:
        free(key_buffer)
        free(lowered)


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* answer[r] = column[r] > border for r < n (C's ordered ">": NaN gives 0), 16 rows per step
       with SSE2 (the compiler does not vectorise the byte stores of the plain loop) */
    static void cx_greater(const double *column, double border, unsigned char *answer, Py_ssize_t n) {
        Py_ssize_t r = 0;
    #if defined(__SSE2__)
        const __m128d b = _mm_set1_pd(border);
        const __m128i one = _mm_set1_epi8(1);
        for (; r + 16 <= n; r += 16) {
            __m128 m01 = _mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r), b)),
                                        _mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 2), b)),
                                        _MM_SHUFFLE(2, 0, 2, 0));
            __m128 m23 = _mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 4), b)),
                                        _mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 6), b)),
                                        _MM_SHUFFLE(2, 0, 2, 0));
            __m128 m45 = _mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 8), b)),
                                        _mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 10), b)),
                                        _MM_SHUFFLE(2, 0, 2, 0));
            __m128 m67 = _mm_shuffle_ps(_mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 12), b)),
                                        _mm_castpd_ps(_mm_cmpgt_pd(_mm_loadu_pd(column + r + 14), b)),
                                        _MM_SHUFFLE(2, 0, 2, 0));
            __m128i lo = _mm_packs_epi32(_mm_castps_si128(m01), _mm_castps_si128(m23));
            __m128i hi = _mm_packs_epi32(_mm_castps_si128(m45), _mm_castps_si128(m67));
            _mm_storeu_si128((__m128i *)(answer + r), _mm_and_si128(_mm_packs_epi16(lo, hi), one));
        }
    #endif
        for (; r < n; r++)
            answer[r] = column[r] > border;
    }
    """
    void cx_greater(const double *column, double border, unsigned char *answer, Py_ssize_t n) noexcept nogil


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define cx_prefetch(address) __builtin_prefetch(address)
    #else
    #define cx_prefetch(address) ((void)0)
    #endif
    """
    void cx_prefetch(const void *address) noexcept nogil


def tree_scores(
    const double[:, ::1] columns,
    const int64_t[::1] split_column,
    const double[::1] split_border,
    const int64_t[::1] split_of_level,
    Py_ssize_t depth,
    const double[:, ::1] leaves,
    double[:, ::1] out,
):
    """Add the leaf values of every oblivious tree to ``out`` (rows, outputs), tree after tree.

    ``columns`` (features, rows) holds the rows' features column by column.  The distinct
    splits ``x[split_column[s]] > split_border[s]`` are compared once per row; level ``d`` of tree
    ``t`` asks split ``split_of_level[t * depth + d]``, and the row goes to leaf
    ``sum(2**d * answer_d)``, whose values are ``leaves[t * 2**depth + leaf]``.  The comparisons
    run 16 rows at a time with SSE2 where the compiler has it (``cx_greater``).

    The leaf numbers of a tree are assembled from eight rows of answers at once (the levels
    beyond ``depth`` read a row of zeros), a loop the C compiler turns into byte vector
    instructions; the leaf values are then added row by row, four trees per pass, in tree order
    (each row's sum is the same sequence of additions as numpy's, so the scores are identical)."""
    cdef Py_ssize_t splits = split_column.shape[0], rows = columns.shape[1]
    cdef Py_ssize_t trees = split_of_level.shape[0] // depth if depth else 0
    cdef Py_ssize_t outputs = leaves.shape[1]
    cdef Py_ssize_t s, t, d, r, k, base, group, g
    cdef const unsigned char *a[8]
    cdef unsigned char *leaf_row
    cdef const double *lv[4]
    cdef const unsigned char *lf[4]
    cdef double *o
    cdef double acc
    if rows == 0 or trees == 0:
        return
    if depth > 8:
        raise ValueError("trees deeper than 8 levels")
    # the answers of every split, then a row of zeros (the levels a tree does not have)
    cdef unsigned char *answers = <unsigned char *> malloc((splits + 1) * rows)
    # the leaf numbers of up to four trees
    cdef unsigned char *leaf_of = <unsigned char *> malloc(4 * rows)
    # (one row: the leaf of every tree)
    cdef Py_ssize_t *leaf_index = <Py_ssize_t *> malloc(trees * sizeof(Py_ssize_t)) if rows == 1 else NULL
    cdef Py_ssize_t leaf
    if answers == NULL or leaf_of == NULL or (rows == 1 and leaf_index == NULL):
        free(answers)
        free(leaf_of)
        free(leaf_index)
        raise MemoryError()
    try:
        with nogil:
            for s in range(splits):
                cx_greater(&columns[split_column[s], 0], split_border[s], answers + s * rows, rows)
            memset(answers + splits * rows, 0, rows)
            if rows == 1:  # (one page's row: every tree's leaf first, their values fetched ahead)
                for t in range(trees):
                    leaf = 0
                    for d in range(depth):
                        leaf |= answers[split_of_level[t * depth + d]] << d
                    leaf_index[t] = (t << depth) + leaf
                    cx_prefetch(&leaves[leaf_index[t], 0])
                    cx_prefetch(&leaves[leaf_index[t], outputs - 1])
                o = &out[0, 0]
                for t in range(trees):  # (the same additions, in tree order)
                    lv[0] = &leaves[leaf_index[t], 0]
                    for k in range(outputs):
                        o[k] += lv[0][k]
            else:
                for d in range(8):
                    a[d] = answers + splits * rows
                t = 0
                while t < trees:
                    group = trees - t if trees - t < 4 else 4
                    for g in range(group):
                        for d in range(depth):
                            a[d] = answers + split_of_level[(t + g) * depth + d] * rows
                        leaf_row = leaf_of + g * rows
                        if depth <= 6:  # (levels 6 and 7 would read the row of zeros)
                            for r in range(rows):
                                leaf_row[r] = (a[0][r] | (a[1][r] << 1) | (a[2][r] << 2) | (a[3][r] << 3)
                                               | (a[4][r] << 4) | (a[5][r] << 5))
                        else:
                            for r in range(rows):
                                leaf_row[r] = (a[0][r] | (a[1][r] << 1) | (a[2][r] << 2) | (a[3][r] << 3)
                                               | (a[4][r] << 4) | (a[5][r] << 5) | (a[6][r] << 6) | (a[7][r] << 7))
                        lf[g] = leaf_row
                        lv[g] = &leaves[(t + g) << depth, 0]
                    if outputs == 1 and group == 4:
                        o = &out[0, 0]
                        for r in range(rows):
                            acc = o[r]
                            acc += lv[0][lf[0][r]]
                            acc += lv[1][lf[1][r]]
                            acc += lv[2][lf[2][r]]
                            acc += lv[3][lf[3][r]]
                            o[r] = acc
                    else:
                        for g in range(group):
                            base = (t + g) << depth
                            for r in range(rows):
                                for k in range(outputs):
                                    out[r, k] += leaves[base + lf[g][r], k]
                    t += group
    finally:
        free(answers)
        free(leaf_of)
        free(leaf_index)



def node_views(
    const int64_t[::1] tag_id, const int64_t[::1] parent, const int64_t[::1] end, const unsigned char[::1] block_table
):
    """The per-node views ``DomArrays`` derives from its walk, in one pass each way: ``is_text``
    (``tag_id == TEXT_TAG``), ``text_nodes`` (their indices), ``small_tag_id`` (``tag_id``
    capped at 255), ``parent0`` (``parent``, the root's -1 as 0), ``is_block`` (``block_table``
    by small tag id) and ``block_seq`` (block starts plus block ends at or before each node)."""
    cdef Py_ssize_t n = tag_id.shape[0], i, texts = 0
    is_text_out = np.empty(n, dtype=np.bool_)
    small_out = np.empty(n, dtype=np.int64)
    parent0_out = np.empty(n, dtype=np.int64)
    is_block_out = np.empty(n, dtype=np.bool_)
    seq_out = np.zeros(n + 1, dtype=np.int64)
    cdef unsigned char[::1] is_text = is_text_out.view(np.uint8)
    cdef int64_t[::1] small = small_out
    cdef int64_t[::1] parent0 = parent0_out
    cdef unsigned char[::1] is_block = is_block_out.view(np.uint8)
    cdef int64_t[::1] seq = seq_out
    cdef int64_t t
    with nogil:
        for i in range(n):
            t = tag_id[i]
            is_text[i] = t == <int64_t> TEXT_TAG
            texts += is_text[i]
            t = t if t < 255 else 255
            small[i] = t
            parent0[i] = parent[i] if parent[i] > 0 else 0
            is_block[i] = block_table[t] if t >= 0 else 0  # (numpy's take: -1 is entry 255, False)
            if is_block[i]:
                seq[i] += 1
                seq[end[i]] += 1
        for i in range(1, n):
            seq[i] += seq[i - 1]
    text_nodes_out = np.empty(texts, dtype=np.int64)
    cdef int64_t[::1] text_nodes = text_nodes_out
    texts = 0
    with nogil:
        for i in range(n):
            if is_text[i]:
                text_nodes[texts] = i
                texts += 1
    return is_text_out, text_nodes_out, small_out, parent0_out, is_block_out, seq_out[:n]

# --- passes down the tree (pre-order: a parent comes before its children) -----------------


def ancestors_marked(const int64_t[::1] parent, const int64_t[::1] nodes):
    """A flag per node (uint8): whether it is one of ``nodes`` or an ancestor of one (each path
    up is followed until a node already flagged)."""
    cdef Py_ssize_t n = parent.shape[0], k
    cdef int64_t i
    out = np.zeros(n, dtype=np.uint8)
    cdef unsigned char[::1] marked = out
    with nogil:
        for k in range(nodes.shape[0]):
            i = nodes[k]
            while i >= 0 and not marked[i]:
                marked[i] = 1
                i = parent[i]
    return out


def or_down(const int64_t[::1] parent, const uint64_t[::1] own):
    """For every node the OR of ``own`` over the node and its ancestors."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] acc = out
    for i in range(n):
        acc[i] = own[i] | acc[parent[i]] if parent[i] >= 0 else own[i]
    return out


def nearest_marked(const int64_t[::1] parent, const unsigned char[::1] marked):
    """For every node its nearest ancestor-or-self with ``marked`` (the root stands for a node
    without one)."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] near = out
    for i in range(n):
        near[i] = i if (marked[i] or parent[i] < 0) else near[parent[i]]
    return out


def within(const int64_t[::1] parent, const unsigned char[::1] marked):
    """For every node whether it or one of its ancestors is ``marked``."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.empty(n, dtype=np.bool_)
    cdef unsigned char[::1] inside = out.view(np.uint8)
    for i in range(n):
        inside[i] = marked[i] or (parent[i] >= 0 and inside[parent[i]])
    return out


# --- block texts ------------------------------------------------------------------------

from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_4BYTE_KIND, PyUnicode_DATA, PyUnicode_FromKindAndData,
    PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_Substring,
)


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)


#: ``Py_UNICODE_ISSPACE`` of the 256 characters a one-byte (Latin-1) ``str`` holds: its texts are
#: read byte by byte with this table (most pages' text is ASCII).
cdef unsigned char _SPACE1[256]
for _c in range(256):
    _SPACE1[_c] = 1 if Py_UNICODE_ISSPACE(_c) else 0  # (0 or 1: text_counts adds them)


def block_texts(list texts, const int64_t[::1] ordinal, const int64_t[::1] seq):
    """For every run of equal ``seq`` values, the concatenation of the texts ``texts[ordinal[i]]``
    of the run with whitespace collapsed: ``" ".join("".join(run).split())`` (whitespace as
    ``str.split`` has it).  A run of one-byte (Latin-1) texts is collapsed byte by byte."""
    cdef Py_ssize_t n = ordinal.shape[0], start = 0, stop, i, j, total, length, written
    cdef Py_UCS4 *buffer = NULL
    cdef Py_UCS4 *bigger
    cdef unsigned char *narrow
    cdef Py_ssize_t capacity = 0
    cdef Py_UCS4 ch
    cdef unsigned char byte, keep, pending
    cdef const unsigned char *chars
    cdef bint pending_space, one_byte
    cdef int kind
    cdef void *data
    cdef str text
    out = []
    try:
        while start < n:
            stop = start + 1
            text = texts[ordinal[start]]
            total = PyUnicode_GET_LENGTH(text)
            one_byte = PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND
            while stop < n and seq[stop] == seq[start]:
                text = texts[ordinal[stop]]
                total += PyUnicode_GET_LENGTH(text)
                one_byte = one_byte and PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND
                stop += 1
            if total > capacity:
                bigger = <Py_UCS4 *> realloc(buffer, total * sizeof(Py_UCS4))
                if bigger == NULL:
                    raise MemoryError()
                buffer, capacity = bigger, total
            written = 0
            pending_space = False
            if one_byte:  # (the UCS4 buffer's bytes hold the one-byte text)
                narrow = <unsigned char *> buffer
                pending = 0
                for i in range(start, stop):
                    text = texts[ordinal[i]]
                    chars = <const unsigned char *> PyUnicode_DATA(text)
                    length = PyUnicode_GET_LENGTH(text)
                    # without branches: a " " and the byte are stored, and kept (``written``
                    # moved past them) when due; the buffer has 4 bytes per character, so the
                    # stores one past the kept text stay inside it
                    for j in range(length):
                        byte = chars[j]
                        keep = _SPACE1[byte] ^ 1
                        narrow[written] = 32
                        written += pending & keep
                        narrow[written] = byte
                        written += keep
                        pending = (keep ^ 1) & (written != 0)
                out.append(PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, narrow, written) if written else "")
                start = stop
                continue
            for i in range(start, stop):
                text = texts[ordinal[i]]
                kind = PyUnicode_KIND(text)
                data = PyUnicode_DATA(text)
                length = PyUnicode_GET_LENGTH(text)
                for j in range(length):
                    ch = PyUnicode_READ(kind, data, j)
                    if Py_UNICODE_ISSPACE(ch):
                        pending_space = written > 0
                    else:
                        if pending_space:
                            buffer[written] = 32
                            written += 1
                            pending_space = False
                        buffer[written] = ch
                        written += 1
            out.append(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buffer, written) if written else "")
            start = stop
        return out
    finally:
        free(buffer)


# --- title words ------------------------------------------------------------------------


cdef unsigned char _ASCII_WORD[128]
for _c in range(128):
    _ASCII_WORD[_c] = chr(_c).isalnum() or _c == 95


cdef inline bint _is_word(Py_UCS4 ch) noexcept:
    if ch < 128:
        return _ASCII_WORD[ch]
    return Py_UNICODE_ISALNUM(ch)  # alphanumeric (or "_", ASCII): the regex \w


cdef inline uint64_t _word_slot(Py_ssize_t length, Py_UCS4 first, Py_UCS4 last) noexcept:
    """One of 4,096 filter bits for a word of this length and first and last characters."""
    return ((<uint64_t> length * 0x9E3779B1u) ^ (<uint64_t> first * 0x85EBCA77u)
            ^ (<uint64_t> last * 0xC2B2AE3Du)) & 4095


def word_hits(list texts, object words):
    """For each of ``texts``, how many of its maximal runs of word characters (regex ``\\w``) are
    in the set ``words`` (a run is looked up only when a filter on its length and first and last
    characters says one of ``words`` may be it)."""
    cdef Py_ssize_t n = len(texts), i, j, length, run_start
    cdef uint64_t slots[64]
    cdef uint64_t slot
    cdef Py_ssize_t word_length
    cdef str word_text
    memset(slots, 0, sizeof(slots))
    for word in words:
        word_text = word
        word_length = len(word_text)
        if word_length == 0:
            continue
        slot = _word_slot(word_length, word_text[0], word_text[word_length - 1])
        slots[slot >> 6] |= (<uint64_t> 1) << (slot & 63)
    out = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] hits = out
    cdef int kind
    cdef void *data
    cdef str text
    for i in range(n):
        text = texts[i]
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        j = 0
        while j < length:
            if not _is_word(PyUnicode_READ(kind, data, j)):
                j += 1
                continue
            run_start = j
            while j < length and _is_word(PyUnicode_READ(kind, data, j)):
                j += 1
            slot = _word_slot(j - run_start, PyUnicode_READ(kind, data, run_start), PyUnicode_READ(kind, data, j - 1))
            if slots[slot >> 6] & ((<uint64_t> 1) << (slot & 63)):
                if PyUnicode_Substring(text, run_start, j) in words:
                    hits[i] += 1
    return out



cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    bint PyUnicode_IS_ASCII(object text)
    unsigned char *PyUnicode_1BYTE_DATA(object text)


cdef void _ascii_lower(const unsigned char *src, unsigned char *dst, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef unsigned char c
    for i in range(n):  # (no branch: vectorised)
        c = src[i]
        dst[i] = c + ((<unsigned char> (c - 65) < 26) << 5)


cdef extern from "Python.h":
    Py_UCS4 Py_UNICODE_TOLOWER(Py_UCS4 ch)


cdef object _wide_lower(str text, Py_ssize_t length):
    """``text.lower()`` of a non-ASCII ``text`` without U+0130 (the one character whose full lower
    case is two) and U+03A3 (whose lower case depends on its neighbours): every other character
    lowers alone to the one character ``Py_UNICODE_TOLOWER`` gives (ASCII ones by arithmetic); the
    result is made canonical (its widest character decides its kind).  None when ``text`` holds
    one of the two."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4 *buffer = <Py_UCS4 *> malloc(length * sizeof(Py_UCS4))
    cdef Py_ssize_t i
    cdef uint32_t c
    if buffer == NULL:
        raise MemoryError()
    try:
        for i in range(length):
            c = <uint32_t> PyUnicode_READ(kind, data, i)
            if c < 128:
                buffer[i] = <Py_UCS4> (c + ((<uint32_t> (c - 65) < 26) << 5))
            elif c == 0x130 or c == 0x3A3:
                return None
            else:
                buffer[i] = Py_UNICODE_TOLOWER(<Py_UCS4> c)
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buffer, length)
    finally:
        free(buffer)


def lower_texts(list texts):
    """``[t.lower() for t in texts]``: an ASCII text lowered by a branch-free byte loop, another
    character by character (:func:`_wide_lower`) unless it needs ``str.lower``'s context rules."""
    cdef Py_ssize_t n = len(texts), i, length
    cdef list out = [None] * n
    cdef str text
    for i in range(n):
        text = texts[i]
        length = PyUnicode_GET_LENGTH(text)
        if length and PyUnicode_IS_ASCII(text):
            lowered = PyUnicode_New(length, 127)
            _ascii_lower(PyUnicode_1BYTE_DATA(text), PyUnicode_1BYTE_DATA(lowered), length)
        else:
            lowered = _wide_lower(text, length) if length else text
            if lowered is None:
                lowered = text.lower()
        out[i] = lowered
    return out


def text_repeats(list texts, double[::1] out):
    """How many of ``texts`` equal each of them (``Counter(texts)[text]``), as floats in ``out``:
    one open-addressing table of the texts' code units (a ``str`` is canonical: equal texts have
    the same kind, length and data), no dict and no ``str`` hash."""
    cdef Py_ssize_t n = len(texts), i, r, capacity = 16, j, length
    while capacity < 2 * n:
        capacity *= 2
    cdef size_t mask = capacity - 1
    cdef int64_t *slot_text = <int64_t *> malloc(capacity * sizeof(int64_t))
    cdef uint64_t *slot_hash = <uint64_t *> malloc(capacity * sizeof(uint64_t))
    cdef int64_t *group = <int64_t *> malloc((n + 1) * 2 * sizeof(int64_t))
    cdef int64_t *count
    cdef int kind
    cdef uint64_t h
    cdef str text, other
    try:
        if slot_text == NULL or slot_hash == NULL or group == NULL:
            raise MemoryError()
        count = group + n + 1
        memset(slot_text, 0xFF, capacity * sizeof(int64_t))  # (-1: empty)
        for i in range(n):
            text = texts[i]
            kind = PyUnicode_KIND(text)
            length = PyUnicode_GET_LENGTH(text)
            h = _bytes_hash(<const unsigned char *> PyUnicode_DATA(text), length * kind) ^ <uint64_t> kind
            j = (h >> 3) & mask
            while True:
                r = slot_text[j]
                if r < 0:
                    slot_text[j] = i
                    slot_hash[j] = h
                    group[i] = i
                    count[i] = 1
                    break
                if slot_hash[j] == h:
                    other = texts[r]
                    if (
                        PyUnicode_GET_LENGTH(other) == length and PyUnicode_KIND(other) == kind
                        and memcmp(PyUnicode_DATA(other), PyUnicode_DATA(text), length * kind) == 0
                    ):
                        group[i] = r
                        count[r] += 1
                        break
                j = (j + 1) & mask
        for i in range(n):
            out[i] = <double> count[group[i]]
    finally:
        free(slot_text)
        free(slot_hash)
        free(group)


# --- text shape -------------------------------------------------------------------------


DEF SHAPE_CLASSES = 16


def text_shape(list texts, const int64_t[::1] class_of, const unsigned char[::1] sentence_tail, Py_ssize_t classes):
    """``(lengths, counts, ends)`` of the (non-empty) ``texts``: characters, the count of each
    class ``class_of[unit]`` over the text's UTF-16 code units (a character outside the BMP is two
    surrogate units of class 0) and whether its last code unit is in ``sentence_tail``."""
    cdef Py_ssize_t n = len(texts), i, j, length
    lengths_out = np.empty(n, dtype=np.float64)
    counts_out = np.zeros((n, classes), dtype=np.float64)
    ends_out = np.zeros(n, dtype=np.bool_)
    cdef double[::1] lengths = lengths_out
    cdef double[:, ::1] counts = counts_out
    cdef unsigned char[::1] ends = ends_out.view(np.uint8)
    cdef int kind
    cdef void *data
    cdef Py_UCS4 ch
    cdef str text
    cdef const unsigned char *chars
    cdef const int64_t *klass = &class_of[0] if class_of.shape[0] else NULL
    # the one-byte texts' counts as integers in four interleaved tables (no chain of additions to
    # one memory cell when a class repeats), added up per text: the same whole numbers
    cdef int64_t tally[4][SHAPE_CLASSES]
    cdef Py_ssize_t c
    for i in range(n):
        text = texts[i]
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        lengths[i] = length
        if kind == PyUnicode_1BYTE_KIND and classes <= SHAPE_CLASSES and class_of.shape[0] >= 256:
            chars = <const unsigned char *> data
            memset(tally, 0, sizeof(tally))
            j = 0
            while j + 4 <= length:
                tally[0][klass[chars[j]]] += 1
                tally[1][klass[chars[j + 1]]] += 1
                tally[2][klass[chars[j + 2]]] += 1
                tally[3][klass[chars[j + 3]]] += 1
                j += 4
            while j < length:
                tally[0][klass[chars[j]]] += 1
                j += 1
            for c in range(classes):
                counts[i, c] = <double> (tally[0][c] + tally[1][c] + tally[2][c] + tally[3][c])
            if length:
                ends[i] = sentence_tail[chars[length - 1]]
            continue
        for j in range(length):
            ch = PyUnicode_READ(kind, data, j)
            if ch < 0x10000:
                counts[i, class_of[ch]] += 1.0
            else:
                counts[i, 0] += 2.0
        if length:
            ch = PyUnicode_READ(kind, data, length - 1)
            ends[i] = sentence_tail[ch] if ch < 0x10000 else 0
    return lengths_out, counts_out, ends_out


# --- text nodes -------------------------------------------------------------------------


def text_counts(list texts):
    """``(words, stripped)`` of every text: its whitespace-separated words (``len(t.split())``)
    and its length without leading and trailing whitespace (``len(t.strip())``)."""
    cdef Py_ssize_t n = len(texts), i, j, length, first, last, count
    words_out = np.empty(n, dtype=np.int64)
    stripped_out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] words = words_out
    cdef int64_t[::1] stripped = stripped_out
    cdef int kind
    cdef void *data
    cdef bint space, in_word
    cdef unsigned char space1, prev_space
    cdef str text
    cdef const unsigned char *chars
    for i in range(n):
        text = texts[i]
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        count = 0
        in_word = False
        first = -1
        last = -1
        if kind == PyUnicode_1BYTE_KIND:  # (byte by byte, the same counts, without branches)
            chars = <const unsigned char *> data
            first = 0
            while first < length and _SPACE1[chars[first]]:
                first += 1
            if first == length:
                words[i] = 0
                stripped[i] = 0
                continue
            last = length - 1
            while _SPACE1[chars[last]]:
                last -= 1
            # a word starts at ``first`` and at every non-space after a space
            count = 1
            prev_space = 0
            for j in range(first + 1, last + 1):
                space1 = _SPACE1[chars[j]]
                count += prev_space & (space1 ^ 1)
                prev_space = space1
            words[i] = count
            stripped[i] = last - first + 1
            continue
        for j in range(length):
            space = Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))
            if not space:
                if not in_word:
                    count += 1
                if first < 0:
                    first = j
                last = j
            in_word = not space
        words[i] = count
        stripped[i] = last - first + 1 if first >= 0 else 0
    return words_out, stripped_out


# --- the nesting estimate of a page's bytes (nesting.nesting_within) --------------------

cdef unsigned char _NAME_BYTE[256]
cdef unsigned char _LOWER[256]
cdef unsigned char _SPACE_QUOTE[256]


cdef void _byte_tables() noexcept:
    cdef int c
    for c in range(256):
        _LOWER[c] = c + 32 if 65 <= c <= 90 else c
        _NAME_BYTE[c] = (97 <= _LOWER[c] <= 122) or (48 <= c <= 57) or c == 58 or c == 95 or c == 45
        _SPACE_QUOTE[c] = c == 32 or c == 9 or c == 10 or c == 13 or c == 12 or c == 34 or c == 39


_byte_tables()

#: Bytes of a name key (the first NAME_WINDOW lowered bytes of a tag name, zero-padded).
DEF NAME_KEY = 32


cdef struct NameCounts:
    unsigned char *keys   # capacity * NAME_KEY
    int64_t *counts
    unsigned char *used
    Py_ssize_t capacity
    Py_ssize_t size


cdef inline uint64_t _key_hash(const unsigned char *key) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef int i
    for i in range(NAME_KEY):
        h = (h ^ key[i]) * 1099511628211ULL
    return h


cdef int64_t *_count_slot(NameCounts *t, const unsigned char *key) except NULL:
    """The open-element count of the name ``key`` (a new zero slot when unseen; grows the table)."""
    cdef Py_ssize_t i, j, old_capacity
    cdef unsigned char *old_keys
    cdef int64_t *old_counts
    cdef unsigned char *old_used
    if 2 * (t.size + 1) > t.capacity:
        old_keys, old_counts, old_used, old_capacity = t.keys, t.counts, t.used, t.capacity
        t.capacity = old_capacity * 2 if old_capacity else 256
        t.keys = <unsigned char *> malloc(t.capacity * NAME_KEY)
        t.counts = <int64_t *> malloc(t.capacity * sizeof(int64_t))
        t.used = <unsigned char *> malloc(t.capacity)
        if t.keys == NULL or t.counts == NULL or t.used == NULL:
            raise MemoryError()
        for i in range(t.capacity):
            t.used[i] = 0
        for i in range(old_capacity):
            if old_used[i]:
                j = <Py_ssize_t> (_key_hash(old_keys + i * NAME_KEY) & <uint64_t> (t.capacity - 1))
                while t.used[j]:
                    j = (j + 1) & (t.capacity - 1)
                t.used[j] = 1
                memcpy(t.keys + j * NAME_KEY, old_keys + i * NAME_KEY, NAME_KEY)
                t.counts[j] = old_counts[i]
        free(old_keys); free(old_counts); free(old_used)
    j = <Py_ssize_t> (_key_hash(key) & <uint64_t> (t.capacity - 1))
    while t.used[j]:
        if memcmp(t.keys + j * NAME_KEY, key, NAME_KEY) == 0:
            return &t.counts[j]
        j = (j + 1) & (t.capacity - 1)
    t.used[j] = 1
    memcpy(t.keys + j * NAME_KEY, key, NAME_KEY)
    t.counts[j] = 0
    t.size += 1
    return &t.counts[j]


cdef inline bint _in_sorted(const uint64_t[::1] keys, uint64_t key) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = keys.shape[0], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < keys.shape[0] and keys[lo] == key


cdef struct ShortNames:
    uint64_t *keys        # a name of at most 8 bytes as its little-endian key (never 0)
    int64_t *counts
    unsigned char *flags  # SHORT_USED | SHORT_UNCOUNTED | SHORT_LEAF, found once per name
    Py_ssize_t capacity
    Py_ssize_t size


DEF SHORT_USED = 1
DEF SHORT_UNCOUNTED = 2
DEF SHORT_LEAF = 4


cdef inline Py_ssize_t _short_home(uint64_t key, Py_ssize_t capacity) noexcept nogil:
    return <Py_ssize_t> ((key * 0x9E3779B97F4A7C15ULL) >> 32) & (capacity - 1)


cdef Py_ssize_t _short_slot(
    ShortNames *t, uint64_t key, const uint64_t[::1] uncounted_keys, const uint64_t[::1] svg_leaf_keys
) except -1:
    """The slot of the short name ``key`` in ``t`` (a new one, count 0 and the name's flags from the
    sorted key lists, when unseen; grows the table)."""
    cdef Py_ssize_t i, j, old_capacity
    cdef uint64_t *old_keys
    cdef int64_t *old_counts
    cdef unsigned char *old_flags
    if 2 * (t.size + 1) > t.capacity:
        old_keys, old_counts, old_flags, old_capacity = t.keys, t.counts, t.flags, t.capacity
        t.capacity = old_capacity * 2 if old_capacity else 128
        t.keys = <uint64_t *> malloc(t.capacity * sizeof(uint64_t))
        t.counts = <int64_t *> malloc(t.capacity * sizeof(int64_t))
        t.flags = <unsigned char *> calloc(t.capacity, 1)
        if t.keys == NULL or t.counts == NULL or t.flags == NULL:
            raise MemoryError()
        for i in range(old_capacity):
            if old_flags[i]:
                j = _short_home(old_keys[i], t.capacity)
                while t.flags[j]:
                    j = (j + 1) & (t.capacity - 1)
                t.keys[j] = old_keys[i]
                t.counts[j] = old_counts[i]
                t.flags[j] = old_flags[i]
        free(old_keys); free(old_counts); free(old_flags)
    j = _short_home(key, t.capacity)
    while t.flags[j]:
        if t.keys[j] == key:
            return j
        j = (j + 1) & (t.capacity - 1)
    t.keys[j] = key
    t.counts[j] = 0
    t.flags[j] = (
        SHORT_USED
        | (SHORT_UNCOUNTED if _in_sorted(uncounted_keys, key) else 0)
        | (SHORT_LEAF if _in_sorted(svg_leaf_keys, key) else 0)
    )
    t.size += 1
    return j


cdef Py_ssize_t _count_byte(const unsigned char *buf, Py_ssize_t n, unsigned char byte) noexcept nogil:
    """How many bytes of ``buf[:n]`` equal ``byte`` (in blocks of 255 counted in one byte each:
    vectorised)."""
    cdef Py_ssize_t total = 0, i = 0, j, end
    cdef unsigned char block
    while i < n:
        end = i + 255 if i + 255 < n else n
        block = 0
        for j in range(i, end):
            block += buf[j] == byte
        total += block
        i = end
    return total


def nesting_within(
    const unsigned char[::1] data,
    Py_ssize_t max_depth,
    const uint64_t[::1] uncounted_keys,
    const uint64_t[::1] svg_leaf_keys,
    list svg_long_rows,
    uint64_t svg_key,
):
    """:func:`~contentx_udf.page.nesting.nesting_within` in one pass over the bytes: the same tag
    tokens, names, self-closed SVG leaves and per-name depth counts floored at zero, walked in
    order instead of as numpy arrays (``uncounted_keys`` and ``svg_leaf_keys``: sorted 8-byte
    name keys; ``svg_long_rows``: the longer SVG leaf names as NAME_KEY-byte rows; ``svg_key``:
    the key of ``svg``).  A name of at most 8 bytes (nearly every tag) is counted in a table keyed
    by its 8-byte key, which also remembers whether the name is counted and an SVG leaf; a longer
    name in one keyed by its first NAME_KEY bytes."""
    cdef Py_ssize_t n = data.shape[0]
    if n == 0:
        return True
    cdef const unsigned char *buf = &data[0]
    cdef Py_ssize_t last = n - 1, p = 0, na, gt = -1, prev_gt = -2, length, i, j, slot_index
    cdef bint closing, real, counted, leaf_name, namespaced, ends_closed, leaf_closed, opens_svg
    cdef bint long_name, svg_open_before = False, is_leaf
    cdef unsigned char key[NAME_KEY]
    cdef unsigned char c
    cdef uint64_t short_key
    cdef int64_t total = 0, depth
    cdef int64_t *slot
    cdef const unsigned char *found
    cdef NameCounts table
    cdef ShortNames names
    table.keys = NULL; table.counts = NULL; table.used = NULL; table.capacity = 0; table.size = 0
    names.keys = NULL; names.counts = NULL; names.flags = NULL; names.capacity = 0; names.size = 0
    cdef bytes row
    cdef list long_rows = [bytes(r) for r in svg_long_rows]
    # every "<" starts at most one token, which raises the estimate by at most one: once the
    # estimate plus the "<" left cannot pass max_depth, nothing is dropped
    cdef Py_ssize_t left = _count_byte(buf, n, 60)
    try:
        while p < n:
            if total + left <= max_depth:
                return True
            found = <const unsigned char *> memchr(buf + p, 60, n - p)  # "<"
            if found == NULL:
                break
            left -= 1
            p = found - buf
            closing = p < last and buf[p + 1] == 47  # "/"
            na = p + 1 + closing
            p += 1
            if na > last or not (97 <= _LOWER[buf[na]] <= 122):
                continue  # no tag token
            # the token runs to the next ">"; a "<" before it belongs to the previous token
            if gt < na:
                found = <const unsigned char *> memchr(buf + na, 62, n - na)  # ">"
                gt = (found - buf) if found != NULL else n
            real = gt < n and gt != prev_gt
            prev_gt = gt
            # the lowered name: its first 8 bytes as a key (little-endian, as numpy's view("<u8"))
            short_key = 0
            length = 0
            namespaced = False
            while length < 9 and na + length < n and _NAME_BYTE[buf[na + length]]:
                c = _LOWER[buf[na + length]]
                namespaced = namespaced or c == 58  # ":" in the first 9 letters
                if length < 8:
                    short_key |= (<uint64_t> c) << (8 * length)
                length += 1
            ends_closed = real and buf[gt - 1] == 47
            if length <= 8:
                long_name = False
                slot_index = _short_slot(&names, short_key, uncounted_keys, svg_leaf_keys)
                counted = real and not (names.flags[slot_index] & SHORT_UNCOUNTED)
                leaf_name = (names.flags[slot_index] & SHORT_LEAF) != 0
            else:  # the first NAME_KEY lowered bytes, zero-padded
                slot_index = -1
                memset(key, 0, NAME_KEY)
                length = 0
                while length < NAME_KEY and na + length < n and _NAME_BYTE[buf[na + length]]:
                    key[length] = _LOWER[buf[na + length]]
                    length += 1
                long_name = length >= NAME_KEY
                counted = real
                row = PyBytes_FromStringAndSize(<const char *> key, NAME_KEY)
                leaf_name = row in long_rows
            leaf_closed = (not closing) and ends_closed and (
                _SPACE_QUOTE[buf[gt - 2]] or (length <= 8 and gt - 1 == na + length)
            )
            opens_svg = real and not closing and length == 3 and short_key == svg_key and not ends_closed
            # a self-closed SVG leaf inside <svg>: the last token before it that is no leaf opens one
            is_leaf = leaf_name or namespaced or not real
            if is_leaf and leaf_closed and real and svg_open_before:
                counted = False
            if not is_leaf:
                svg_open_before = opens_svg
            if not counted:
                continue
            if closing and long_name:
                depth = total  # (an end tag of a long name never lowers the estimate)
            else:
                slot = &names.counts[slot_index] if slot_index >= 0 else _count_slot(&table, key)
                if closing:
                    depth = total
                    if slot[0] > 0:
                        slot[0] -= 1
                        total -= 1
                else:
                    slot[0] += 1
                    total += 1
                    depth = total
            if depth > max_depth:
                return False
        return True
    finally:
        free(table.keys); free(table.counts); free(table.used)
        free(names.keys); free(names.counts); free(names.flags)


# --- cleaning: the removed tags and the hidden elements (document._remove_unseen) ----------


cdef bint _ascii_equal_nocase(const unsigned char *a, size_t n, const char *lower_b, size_t m) noexcept nogil:
    cdef size_t i
    if n != m:
        return False
    for i in range(n):
        if _LOWER[a[i]] != <unsigned char> lower_b[i]:
            return False
    return True


cdef bint _contains_nocase(const unsigned char *hay, size_t n, const char *lower_needle, size_t m) noexcept nogil:
    """``[attr*="needle" i]``: an ASCII case-insensitive substring (Lexbor folds ASCII only)."""
    cdef size_t i, j
    if m > n:
        return False
    for i in range(n - m + 1):
        j = 0
        while j < m and _LOWER[hay[i + j]] == <unsigned char> lower_needle[j]:
            j += 1
        if j == m:
            return True
    return False


#: The hidden-element selector's substrings of ``style`` (document.HIDDEN_SELECTOR).
cdef const char *HIDDEN_STYLES[4]
HIDDEN_STYLES[0] = b"display:none"
HIDDEN_STYLES[1] = b"display: none"
HIDDEN_STYLES[2] = b"visibility:hidden"
HIDDEN_STYLES[3] = b"visibility: hidden"
cdef size_t HIDDEN_STYLE_LENGTHS[4]
HIDDEN_STYLE_LENGTHS[:] = [12, 13, 17, 18]

#: What :func:`unseen` found for an element.
DEF UNSEEN_NO = 0
DEF UNSEEN_YES = 1
DEF UNSEEN_ASK = 2  # (a case the compiled look-up does not decide: the Python path runs)


cdef int _hidden_match(void *node) noexcept nogil:
    """Whether the element matches document.HIDDEN_SELECTOR: ``[hidden]``, a ``style`` holding
    one of HIDDEN_STYLES (ASCII case-insensitive), ``[type="hidden"]`` (exact; another case of
    "hidden" is UNSEEN_ASK: Lexbor folds it on HTML elements only); an attribute name that equals
    one of those only when case is folded is UNSEEN_ASK too."""
    cdef void *attr = _first_attribute(node)
    cdef const unsigned char *name
    cdef const unsigned char *value
    cdef size_t length, value_length
    cdef int k, found = UNSEEN_NO
    while attr != NULL:
        name = _attr_name(attr, &length)
        if name != NULL:
            if length == 6 and memcmp(name, b"hidden", 6) == 0:
                return UNSEEN_YES
            if length == 5 and memcmp(name, b"style", 5) == 0:
                value = _attr_value(attr, &value_length)
                if value != NULL:
                    for k in range(4):
                        if _contains_nocase(value, value_length, HIDDEN_STYLES[k], HIDDEN_STYLE_LENGTHS[k]):
                            return UNSEEN_YES
            elif length == 4 and memcmp(name, b"type", 4) == 0:
                value = _attr_value(attr, &value_length)
                if value != NULL and _ascii_equal_nocase(value, value_length, b"hidden", 6):
                    if memcmp(value, b"hidden", 6) == 0:
                        return UNSEEN_YES
                    found = UNSEEN_ASK
            elif (
                _ascii_equal_nocase(name, length, b"hidden", 6)
                or _ascii_equal_nocase(name, length, b"style", 5)
                or _ascii_equal_nocase(name, length, b"type", 4)
            ):
                found = UNSEEN_ASK
        attr = _next_attribute(attr)
    return found


cdef void _remove_deep(void *root) noexcept nogil:
    """Unlink ``root`` and every node under it, children first (selectolax's ``decompose``)."""
    cdef void *node = root
    cdef void *tmp
    while node != NULL:
        tmp = _first_child(node)
        if tmp != NULL:
            node = tmp
            continue
        while node != root and _next_sibling(node) == NULL:
            tmp = _parent(node)
            _node_remove(node)
            node = tmp
        if node == root:
            _node_remove(node)
            break
        tmp = _next_sibling(node)
        _node_remove(node)
        node = tmp


def remove_unseen(
    size_t body_address,
    size_t head_address,
    const unsigned char[::1] removed_tag,
    uintptr_t div_tag,
    Py_ssize_t near_depth,
    size_t min_chars,
):
    """Cleaning under ``<body>`` (itself included), as
    :func:`~contentx_udf.page.document._remove_unseen` does it with Lexbor's CSS engine: the
    elements whose tag id is marked in ``removed_tag`` and those matching the hidden-element
    selector are unlinked, later ones first.  Returns how many, or None (and changes nothing)
    when one of them needs the Python path: a hidden element that a script may show
    (``_shown_by_script``: within ``near_depth`` levels of ``<body>`` with ``min_chars`` bytes of
    text or more, which may be that many characters, or a ``<div hidden>`` whose ``id`` starts
    with "S:"), ``<body>`` or ``<head>`` itself, or a case the look-up leaves to Lexbor
    (UNSEEN_ASK).  (Lexbor's copy of a near element's text stays in the document's arena until
    the document is freed.)"""
    if _first_child == NULL or _node_remove == NULL or _text_content == NULL:
        raise OSError("bind() was not called")
    cdef void *root = <void *> body_address
    cdef void *node = root
    cdef void *up
    cdef void *attr
    cdef const unsigned char *name
    cdef const unsigned char *value
    cdef uintptr_t tag
    cdef int match, levels
    cdef size_t length, value_length, text_length
    cdef bint react_id, has_hidden
    cdef Py_ssize_t i
    cdef Grow found
    _init(&found)
    cdef Py_ssize_t n_removed = removed_tag.shape[0]
    try:
        while node != NULL:
            if _node_type(node) == ELEMENT_NODE:
                tag = _tag_id(node)
                if <Py_ssize_t> tag < n_removed and removed_tag[tag]:
                    match = UNSEEN_YES
                    if node == root or <size_t> node == head_address:
                        return None
                else:
                    match = _hidden_match(node)
                    if match == UNSEEN_ASK:
                        return None
                    if match == UNSEEN_YES:
                        if node == root or <size_t> node == head_address:
                            return None
                        if tag == div_tag:  # React's streamed part: <div hidden id="S:n">
                            react_id = has_hidden = False
                            attr = _first_attribute(node)
                            while attr != NULL:
                                name = _attr_name(attr, &length)
                                if name != NULL and length == 2 and memcmp(name, b"id", 2) == 0:
                                    value = _attr_value(attr, &value_length)
                                    react_id = (
                                        value != NULL and value_length >= 2 and value[0] == 83 and value[1] == 58
                                    )
                                elif name != NULL and length == 6 and memcmp(name, b"hidden", 6) == 0:
                                    has_hidden = True
                                attr = _next_attribute(attr)
                            if react_id and has_hidden:
                                return None
                        up = _parent(node)
                        levels = 1
                        while up != NULL and up != root and levels < near_depth:
                            up = _parent(up)
                            levels += 1
                        if up == root:  # near <body>: kept when it holds most of the text
                            text_length = 0
                            if _text_content(node, &text_length) != NULL and text_length >= min_chars:
                                return None
                if match == UNSEEN_YES:
                    _push(&found, <int64_t> <uintptr_t> node)
            node = _next_in_order(node, root)
        for i in range(found.size - 1, -1, -1):
            _remove_deep(<void *> <uintptr_t> found.data[i])
        return found.size
    finally:
        free(found.data)


# --- searching the page's UTF-8 bytes ------------------------------------------------------

cdef extern from "<string.h>" nogil:
    void *memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length)


def find_all(const unsigned char[::1] data, bytes needle, Py_ssize_t anchor=-1):
    """The start of every occurrence of ``needle`` in ``data`` (overlapping ones too), in order:
    glibc's ``memmem``, several times faster than ``bytes.find`` on HTML, where the needle's
    first and last characters ("<", "t") are everywhere.  With ``anchor`` (an index into
    ``needle``) ``memchr`` looks for that byte of the needle and the rest is compared where it is
    found: faster when the byte is rare in ``data`` (the "@" of '"@type"')."""
    cdef Py_ssize_t n = data.shape[0], m = len(needle), pos = 0, at
    cdef const unsigned char *start
    cdef const unsigned char *found
    cdef const char *wanted = <const char *> needle
    out = []
    if n == 0 or m == 0:
        return out
    start = &data[0]
    if 0 <= anchor < m:
        pos = anchor  # (the anchor byte of the first possible occurrence)
        while pos + m - anchor <= n:
            found = <const unsigned char *> memchr(start + pos, <unsigned char> wanted[anchor], n - pos)
            if found == NULL:
                break
            at = found - start - anchor  # (>= 0: the search starts at ``anchor``)
            if at + m <= n and memcmp(start + at, wanted, m) == 0:
                out.append(at)
            pos = found - start + 1
        return out
    while pos + m <= n:
        found = <const unsigned char *> memmem(start + pos, n - pos, <const char *> needle, m)
        if found == NULL:
            break
        out.append(found - start)
        pos = found - start + 1
    return out


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* The first position at or after pos of "<n", "<N", "</n" or "</N" in buf[0:n] (-1: none):
       with SSE2 16 positions per step (three overlapping loads), the last ones one by one. */
    static Py_ssize_t cx_next_lt_n(const unsigned char *buf, Py_ssize_t n, Py_ssize_t pos) {
    #if defined(__SSE2__)
        const __m128i lt = _mm_set1_epi8('<'), slash = _mm_set1_epi8('/');
        const __m128i low = _mm_set1_epi8(0x20), letter = _mm_set1_epi8('n');
        for (; pos + 18 <= n; pos += 16) {
            __m128i v0 = _mm_loadu_si128((const __m128i *)(buf + pos));
            __m128i v1 = _mm_loadu_si128((const __m128i *)(buf + pos + 1));
            __m128i v2 = _mm_loadu_si128((const __m128i *)(buf + pos + 2));
            __m128i n1 = _mm_cmpeq_epi8(_mm_or_si128(v1, low), letter);
            __m128i n2 = _mm_and_si128(_mm_cmpeq_epi8(v1, slash),
                                       _mm_cmpeq_epi8(_mm_or_si128(v2, low), letter));
            int mask = _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v0, lt), _mm_or_si128(n1, n2)));
            if (mask)
                return pos + __builtin_ctz((unsigned int)mask);
        }
    #endif
        for (; pos + 1 < n; pos++) {
            if (buf[pos] != '<')
                continue;
            if ((buf[pos + 1] | 0x20) == 'n' || (buf[pos + 1] == '/' && pos + 2 < n && (buf[pos + 2] | 0x20) == 'n'))
                return pos;
        }
        return -1;
    }
    """
    Py_ssize_t cx_next_lt_n(const unsigned char *buf, Py_ssize_t n, Py_ssize_t pos) noexcept nogil


def noscript_tags(const unsigned char[::1] data):
    """Every place of ``<noscript``, ``</noscript``, ``<NOSCRIPT`` and ``</NOSCRIPT`` in ``data``
    (four lists, in order): what ``find_all`` finds for each, in one pass over the bytes (only
    where a "<" or "</" is followed by an "n" or "N" are the tags compared)."""
    cdef Py_ssize_t n = data.shape[0], pos = 0, at
    cdef const unsigned char *buf
    cdef list opens = [], closes = [], opens_upper = [], closes_upper = []
    if n == 0:
        return opens, closes, opens_upper, closes_upper
    buf = &data[0]
    while True:
        at = cx_next_lt_n(buf, n, pos)
        if at < 0:
            break
        if buf[at + 1] == 47:  # "</"
            if at + 10 <= n:
                if memcmp(buf + at, b"</noscript", 10) == 0:
                    closes.append(at)
                elif memcmp(buf + at, b"</NOSCRIPT", 10) == 0:
                    closes_upper.append(at)
        elif at + 9 <= n:
            if memcmp(buf + at, b"<noscript", 9) == 0:
                opens.append(at)
            elif memcmp(buf + at, b"<NOSCRIPT", 9) == 0:
                opens_upper.append(at)
        pos = at + 1
    return opens, closes, opens_upper, closes_upper


# --- groups of equal keys (repeated siblings, templates) ----------------------------------


cdef int _group_keys(const int64_t *keys, Py_ssize_t n, int64_t *labels, int64_t *sizes) except -1:
    """For each of the ``n`` ``keys`` the number of its value in order of first occurrence and how
    many keys hold its value (one open-addressing hash table)."""
    cdef Py_ssize_t i, groups = 0
    cdef size_t capacity = 16, mask, slot
    while capacity < <size_t> (2 * n):
        capacity <<= 1
    mask = capacity - 1
    cdef int64_t *slot_key = <int64_t *> malloc(capacity * sizeof(int64_t))
    cdef int64_t *slot_label = <int64_t *> malloc(capacity * sizeof(int64_t))
    cdef int64_t *counts = <int64_t *> malloc((n + 1) * sizeof(int64_t))
    cdef uint64_t h
    try:
        if slot_key == NULL or slot_label == NULL or counts == NULL:
            raise MemoryError()
        for i in range(<Py_ssize_t> capacity):
            slot_label[i] = -1
        for i in range(n):
            h = <uint64_t> keys[i] * 0x9E3779B97F4A7C15u
            slot = (h ^ (h >> 29)) & mask
            while slot_label[slot] >= 0 and slot_key[slot] != keys[i]:
                slot = (slot + 1) & mask
            if slot_label[slot] < 0:
                slot_key[slot] = keys[i]
                slot_label[slot] = groups
                counts[groups] = 0
                groups += 1
            labels[i] = slot_label[slot]
            counts[slot_label[slot]] += 1
        for i in range(n):
            sizes[i] = counts[labels[i]]
        return 0
    finally:
        free(slot_key)
        free(slot_label)
        free(counts)


def key_groups(const int64_t[::1] keys):
    """``(labels, sizes)`` of the int64 ``keys``: for every entry the number of its value in the
    order of first occurrence (0, 1, ...) and how many entries hold its value (a hash table, where
    ``first_occurrence`` and ``np.unique`` sort)."""
    cdef Py_ssize_t n = keys.shape[0]
    labels_out = np.empty(n, dtype=np.int64)
    sizes_out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] labels = labels_out
    cdef int64_t[::1] sizes = sizes_out
    if n:
        _group_keys(&keys[0], n, &labels[0], &sizes[0])
    return labels_out, sizes_out


def repeated_siblings(
    const int64_t[::1] parent0, const int64_t[::1] small_tag, const int64_t[::1] class_hash,
    const unsigned char[::1] is_text,
):
    """For every node, how many children of its parent share its tag and class, itself included
    (1 for a text node): the key ``parent0 << 40 | small_tag << 32 | class_hash`` of every element
    grouped by :func:`key_groups`."""
    cdef Py_ssize_t n = parent0.shape[0], i, m = 0
    out = np.ones(n, dtype=np.int64)
    cdef int64_t[::1] result = out
    cdef int64_t *keys = <int64_t *> malloc((n + 1) * 3 * sizeof(int64_t))
    try:
        if keys == NULL:
            raise MemoryError()
        for i in range(n):
            if not is_text[i]:
                keys[m] = <int64_t> ((<uint64_t> parent0[i] << 40) | (<uint64_t> small_tag[i] << 32) | <uint64_t> class_hash[i])
                m += 1
        _group_keys(keys, m, keys + n + 1, keys + 2 * (n + 1))
        m = 0
        for i in range(n):
            if not is_text[i]:
                result[i] = keys[2 * (n + 1) + m]
                m += 1
        return out
    finally:
        free(keys)


# --- the block feature columns of ``combined`` -------------------------------------------

#: Positions in ``at`` of the columns :func:`block_columns` writes (the order of
#: ``block_features._COMPILED_COLUMNS``).
cdef enum:
    C_LOG_CHARS = 0
    C_LOG_WORDS = 1
    C_MEAN_WORD_LEN = 2
    C_PUNCT_RATIO = 3
    C_SENTENCE_ENDS = 4
    C_SENTENCES_PER_WORD = 5
    C_DIGIT_RATIO = 6
    C_UPPER_RATIO = 7
    C_SEPARATOR_RATIO = 8
    C_ENDS_LIKE_SENTENCE = 9
    C_LINK_RATIO = 10
    C_LOG_LINKS = 11
    C_HEADING = 12
    C_DEPTH = 13
    C_DEPTH_REL = 14
    C_POSITION = 15
    C_POSITION_CHARS = 16
    C_CHARS_SHARE = 17
    C_BEFORE_H1 = 18
    C_AFTER_H1 = 19
    C_TTR = 20
    C_IN_CECTD = 21
    C_ANCESTORS = 22
    C_NEAR = 23
    C_ABOVE = 24


def block_columns(
    double[:, ::1] columns,
    const int64_t[::1] at,
    const double[::1] lengths,
    const double[:, ::1] classes,
    const unsigned char[::1] ends,
    const int64_t[::1] text_nodes,
    const int64_t[::1] text_block,
    const int64_t[::1] words_per_node,
    const int64_t[::1] text_len,
    const unsigned char[::1] in_a,
    const unsigned char[::1] is_a,
    const unsigned char[::1] is_text,
    const unsigned char[::1] in_cectd,
    const int64_t[::1] first,
    const int64_t[::1] owner,
    const int64_t[::1] small_tag,
    const int64_t[::1] depth,
    const int64_t[::1] owner_column,
    const unsigned char[::1] heading_table,
    Py_ssize_t h1_tag,
    const uint64_t[::1] ancestor_bits,
    const uint64_t[::1] near_bits,
    Py_ssize_t ancestor_count,
    Py_ssize_t group_count,
    double[::1] content,
):
    """Write the block feature columns of ``combined`` that are arithmetic on the blocks' counts
    (``columns``: (features, blocks); ``at[C_...]``: the column of each, see
    ``block_features._COMPILED_COLUMNS``), the numpy code of ``block_features`` in one pass:
    text shape ratios, link ratio, owner tag and heading, depth, positions, the enclosing-tag and
    keyword bits, the share of CECTD-DS's text nodes, and the CETR and CCB inputs.

    The columns that numpy's ``log1p`` finishes are left as its arguments: ``log_chars`` (the
    characters), ``log_words`` (the words), ``log_links`` (the links) and ``ttr`` (characters per
    tag); ``content`` receives the CCB content share of every block.  Every value is the same
    IEEE operation on the same operands as numpy's, in the same order (the per-block sums add
    the text nodes in document order, as ``np.bincount`` does), so the columns are identical.
    Returns ``(characters, link characters, block text length)`` summed over the page."""
    cdef Py_ssize_t nb = first.shape[0], n = is_text.shape[0], texts = text_nodes.shape[0]
    cdef Py_ssize_t i, j, b, node, end, first_h1 = -1, column
    cdef int64_t max_depth = 0
    cdef double chars_sum = 0.0, link_sum = 0.0, total = 0.0, before = 0.0, length1, words, sentence_ends
    cdef double denominator, tags, span_chars
    if nb == 0:
        return 0.0, 0.0, 0.0
    words_of = np.zeros(nb, dtype=np.float64)
    chars_of = np.zeros(nb, dtype=np.float64)
    links_of = np.zeros(nb, dtype=np.float64)
    nodes_of = np.zeros(nb, dtype=np.int64)
    cectd_of = np.zeros(nb, dtype=np.float64)
    cdef double[::1] w = words_of, c = chars_of, lc = links_of, ce = cectd_of
    cdef int64_t[::1] nodes = nodes_of
    cdef int64_t *elements_before = <int64_t *> malloc((n + 1) * sizeof(int64_t))
    cdef int64_t *links_before = <int64_t *> malloc((n + 1) * sizeof(int64_t))
    if elements_before == NULL or links_before == NULL:
        free(elements_before)
        free(links_before)
        raise MemoryError()
    try:
        with nogil:
            # per-block sums over the blocks' text nodes, in document order
            for j in range(texts):
                b = text_block[j]
                if b < 0:
                    continue
                node = text_nodes[j]
                w[b] += <double> words_per_node[node]
                c[b] += <double> text_len[node]
                lc[b] += <double> (text_len[node] * in_a[node])
                nodes[b] += 1
                ce[b] += <double> in_cectd[node]
            elements_before[0] = 0
            links_before[0] = 0
            for i in range(n):
                elements_before[i + 1] = elements_before[i] + (is_text[i] == 0)
                links_before[i + 1] = links_before[i] + is_a[i]
                if depth[i] > max_depth:
                    max_depth = depth[i]
            for b in range(nb):
                total += lengths[b]
                chars_sum += c[b]
                link_sum += lc[b]
                if first_h1 < 0 and small_tag[owner[b]] == h1_tag:
                    first_h1 = b
            total = total if total > 1.0 else 1.0
            for b in range(nb):
                end = first[b + 1] if b + 1 < nb else n
                # text shape
                words = w[b] if w[b] > 1.0 else 1.0
                length1 = lengths[b] if lengths[b] > 1.0 else 1.0
                sentence_ends = classes[b, 2] + classes[b, 6]
                columns[at[C_LOG_CHARS], b] = lengths[b]
                columns[at[C_LOG_WORDS], b] = words
                columns[at[C_MEAN_WORD_LEN], b] = lengths[b] / words
                columns[at[C_PUNCT_RATIO], b] = (classes[b, 1] + classes[b, 2]) / length1
                columns[at[C_SENTENCE_ENDS], b] = sentence_ends if sentence_ends < 50.0 else 50.0
                columns[at[C_SENTENCES_PER_WORD], b] = sentence_ends / words
                columns[at[C_DIGIT_RATIO], b] = classes[b, 3] / length1
                columns[at[C_UPPER_RATIO], b] = classes[b, 4] / length1
                columns[at[C_SEPARATOR_RATIO], b] = classes[b, 5] / length1
                columns[at[C_ENDS_LIKE_SENTENCE], b] = ends[b]
                # links
                columns[at[C_LINK_RATIO], b] = lc[b] / (c[b] if c[b] > 1.0 else 1.0)
                columns[at[C_LOG_LINKS], b] = <double> (links_before[end] - links_before[first[b]])
                # structure
                column = owner_column[small_tag[owner[b]]]
                if column >= 0:
                    columns[column, b] = 1.0
                columns[at[C_HEADING], b] = heading_table[small_tag[owner[b]]]
                columns[at[C_DEPTH], b] = <double> depth[owner[b]]
                columns[at[C_DEPTH_REL], b] = <double> depth[owner[b]] / (
                    <double> max_depth if max_depth > 1 else 1.0
                )
                columns[at[C_POSITION], b] = <double> b / <double> (nb - 1 if nb > 1 else 1)
                before += lengths[b]
                columns[at[C_POSITION_CHARS], b] = (before - lengths[b]) / total
                columns[at[C_CHARS_SHARE], b] = lengths[b] / total
                if first_h1 >= 0:
                    columns[at[C_BEFORE_H1], b] = b < first_h1
                    columns[at[C_AFTER_H1], b] = <double> (b - first_h1) / <double> nb
                for i in range(ancestor_count):
                    columns[at[C_ANCESTORS] + i, b] = (ancestor_bits[b] >> i) & 1
                for i in range(group_count):
                    columns[at[C_NEAR] + i, b] = (near_bits[b] >> i) & 1
                    columns[at[C_ABOVE] + i, b] = (ancestor_bits[b] >> (ancestor_count + i)) & 1
                # CETR: characters per tag of the block's stretch of the DOM; CCB: content share
                tags = <double> (elements_before[end] - elements_before[first[b]])
                columns[at[C_TTR], b] = c[b] / (tags if tags > 1.0 else 1.0)
                denominator = c[b] + 8.0 * tags
                content[b] = c[b] / (denominator if denominator > 1.0 else 1.0)
                columns[at[C_IN_CECTD], b] = ce[b] / <double> (nodes[b] if nodes[b] > 1 else 1)
    finally:
        free(elements_before)
        free(links_before)
    return chars_sum, link_sum, total


def smooth_columns(
    const double[::1] values, const double[::1] kernel, double[::1] out, double[::1] derivative
):
    """Gaussian smoothing of ``values`` over the sequence, renormalised at the edges (the weights
    of ``kernel``, odd length, centred): ``out``; with ``derivative`` of the same length, also the
    absolute central differences of ``out`` (one-sided at the ends), else pass an empty array.
    The sums run in another order than ``np.convolve``'s: equal to about 1e-15."""
    cdef Py_ssize_t n = values.shape[0], radius = kernel.shape[0] // 2, i, j, lo, hi
    cdef double num, den, d
    if n <= 1:
        for i in range(n):
            out[i] = values[i]
        if derivative.shape[0]:
            for i in range(n):
                derivative[i] = 0.0
        return
    with nogil:
        for i in range(n):
            lo = i - radius if i > radius else 0
            hi = i + radius + 1 if i + radius + 1 < n else n
            num = 0.0
            den = 0.0
            for j in range(lo, hi):
                num += values[j] * kernel[j - i + radius]
                den += kernel[j - i + radius]
            out[i] = num / den
        if derivative.shape[0]:
            d = out[1] - out[0]
            derivative[0] = d if d >= 0 else -d
            d = out[n - 1] - out[n - 2]
            derivative[n - 1] = d if d >= 0 else -d
            for i in range(1, n - 1):
                d = (out[i + 1] - out[i - 1]) / 2.0
                derivative[i] = d if d >= 0 else -d


def window_columns(double[:, ::1] columns, const int64_t[::1] source, Py_ssize_t start, const int64_t[::1] offsets):
    """The neighbour columns: for the ``k``-th of ``offsets`` and the ``f``-th of ``source``,
    column ``start + f * len(offsets) + k`` of block ``i`` is column ``source[f]`` of block
    ``i + offset`` (left as it is, 0, past the ends)."""
    cdef Py_ssize_t nb = columns.shape[1], f, k, i, offset, dest
    with nogil:
        for f in range(source.shape[0]):
            for k in range(offsets.shape[0]):
                offset = offsets[k]
                dest = start + f * offsets.shape[0] + k
                for i in range(nb):
                    if 0 <= i + offset < nb:
                        columns[dest, i] = columns[source[f], i + offset]



def best_set_share(
    const double[::1] score, const unsigned char[::1] in_set, const int64_t[::1] parent,
    const int64_t[::1] first, double[::1] out,
):
    """CoreEx's kept set as a column, when some score is finite (else False, ``out`` untouched):
    ``best`` is ``argmax(score)`` (the first NaN when there is one, else the first maximum), and
    ``out[k]`` is 1.0 when node ``first[k]`` is inside (or is) a child of ``best`` in ``in_set``,
    else 0.0 (``block_features``' ``np.isfinite``, ``argmax``, ``within`` and ``take``)."""
    cdef Py_ssize_t n = score.shape[0], i, best = 0, nan_at = -1
    cdef bint finite = False
    cdef double top, v
    for i in range(n):
        v = score[i]
        if v != v:
            if nan_at < 0:
                nan_at = i
        elif v != INFINITY and v != -INFINITY:
            finite = True
    if not finite:
        return False
    if nan_at >= 0:
        best = nan_at
    else:
        top = score[0]
        for i in range(1, n):
            if score[i] > top:
                best, top = i, score[i]
    return _mark_best(in_set, parent, first, out, best)


cdef bint _mark_best(
    const unsigned char[::1] in_set, const int64_t[::1] parent, const int64_t[::1] first, double[::1] out,
    Py_ssize_t best,
) except -1:
    cdef Py_ssize_t n = parent.shape[0], i, k
    cdef unsigned char *inside = <unsigned char *> malloc(n if n else 1)
    if inside == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            inside[i] = (in_set[i] and parent[i] == best) or (parent[i] >= 0 and inside[parent[i]])
        for k in range(first.shape[0]):
            out[k] = 1.0 if inside[first[k]] else 0.0
        return True
    finally:
        free(inside)


def lineage(const int64_t[::1] parent0, const int64_t[::1] owner):
    """``(4, len(owner))``: the owners, their parents, grandparents and great-grandparents
    (``parent0``: the root is its own parent), one row each."""
    cdef Py_ssize_t nb = owner.shape[0], i
    out = np.empty((4, nb), dtype=np.int64)
    cdef int64_t[:, ::1] rows = out
    for i in range(nb):
        rows[0, i] = owner[i]
        rows[1, i] = parent0[rows[0, i]]
        rows[2, i] = parent0[rows[1, i]]
        rows[3, i] = parent0[rows[2, i]]
    return out


#: Positions in ``at`` of the columns :func:`lineage_columns` writes (the order of
#: ``block_features._LINEAGE_COLUMNS``).
cdef enum:
    L_TD = 0  # then ctd (3) and ds (3): 7 columns, before their log1p
    L_CTD_REL_BODY = 1
    L_DS_REL_MAX = 2
    L_IN_CECTD_TARGET = 3
    L_COREEX = 4  # 3 columns
    L_LINK_WORDS = 5  # parent, grandparent
    L_COREEX_SET_SHARE = 6
    L_REPEAT = 7  # 4 columns, before their log1p


def lineage_columns(
    double[:, ::1] columns,
    const int64_t[::1] at,
    const int64_t[:, ::1] lineage,
    const int64_t[::1] first,
    const double[::1] density,
    const double[::1] composite,
    const double[::1] sums,
    int64_t target,
    int64_t target_end,
    const double[::1] score,
    const int64_t[::1] link_cnt,
    const int64_t[::1] text_cnt,
    const double[::1] set_text,
    const int64_t[::1] repeats,
    const int64_t[::1] tag_id,
    const int64_t[::1] class_hash,
    uint64_t path_multiplier,
    Py_ssize_t template_levels,
):
    """The columns of the owner and its ancestors (``lineage``: :func:`lineage`) that
    ``block_features`` writes after the compiled block pass, each value as its numpy steps give it:
    CETD's density, composite density (at least 0) and DensitySum (0 unless finite and positive)
    of the owner, parent and grandparent, left for numpy's ``log1p`` (7 columns from ``at[L_TD]``),
    the composite density over ``<body>``'s and the DensitySum over the page's largest, whether
    the block's first node is inside ``target``; CoreEx's finite scores, link words per word of
    the parent and grandparent and the set's share; the repeated-sibling counts of the four rows
    (left for ``log1p``).  Returns the template number of every block: the (tag, class hash) keys
    of ``template_levels + 1`` rows hashed as ``block_features._templates`` does, numbered by
    :func:`key_groups`."""
    cdef Py_ssize_t nb = lineage.shape[1], n = density.shape[0], i, k
    cdef Py_ssize_t td = at[L_TD], ctd_rel = at[L_CTD_REL_BODY], ds_rel = at[L_DS_REL_MAX]
    cdef Py_ssize_t in_target = at[L_IN_CECTD_TARGET], core = at[L_COREEX], words = at[L_LINK_WORDS]
    cdef Py_ssize_t share = at[L_COREEX_SET_SHARE], repeat = at[L_REPEAT]
    cdef int64_t node
    cdef double v, body, largest = 0.0, text0
    cdef uint64_t path
    # Python's max(x, 1e-9): x unless 1e-9 is greater (a NaN stays)
    body = composite[0] if n else 0.0
    if 1e-9 > body:
        body = 1e-9
    for i in range(n):
        v = sums[i]
        if v - v == 0.0 and v > largest:  # (finite and positive)
            largest = v
    if 1e-9 > largest:
        largest = 1e-9
    text0 = <double> text_cnt[0] if n else 0.0
    if 1.0 > text0:
        text0 = 1.0
    templates_out = np.empty(nb, dtype=np.int64)
    scratch = np.empty((2, nb), dtype=np.int64)  # (the paths, the group sizes)
    cdef int64_t[::1] templates = templates_out
    cdef int64_t[:, ::1] paths = scratch
    for i in range(nb):
        node = lineage[0, i]
        columns[td, i] = density[node]
        for k in range(3):
            node = lineage[k, i]
            v = composite[node]
            columns[td + 1 + k, i] = 0.0 if v < 0.0 else v
            v = sums[node]
            columns[td + 4 + k, i] = v if (v - v == 0.0 and v > 0.0) else 0.0
            v = score[node]
            columns[core + k, i] = v if v - v == 0.0 else 0.0
        node = lineage[0, i]
        columns[ctd_rel, i] = composite[node] / body
        v = sums[node]
        columns[ds_rel, i] = (v if (v - v == 0.0 and v > 0.0) else 0.0) / largest
        columns[in_target, i] = 1.0 if (first[i] >= target and first[i] < target_end) else 0.0
        for k in range(2):
            node = lineage[k + 1, i]
            v = <double> text_cnt[node]
            columns[words + k, i] = <double> link_cnt[node] / (v if v > 1.0 else 1.0)
        columns[share, i] = set_text[lineage[1, i]] / text0
        for k in range(4):
            columns[repeat + k, i] = <double> repeats[lineage[k, i]]
        path = 0
        for k in range(template_levels + 1):
            node = lineage[k, i]
            path = path * path_multiplier + ((<uint64_t> tag_id[node] << 32) | <uint64_t> class_hash[node])
        paths[0, i] = <int64_t> path
    if nb:
        _group_keys(&paths[0, 0], nb, &templates[0], &paths[1, 0])
    return templates_out


def template_smooth(
    const double[::1] probability, const int64_t[::1] templates, const double[::1] weights, double mix,
    Py_ssize_t min_size,
):
    """``combined.smooth_by_template``: each probability moved ``mix`` of the way to the
    ``weights``-weighted mean of its template's (templates of ``min_size`` blocks or more), the
    sums added in block order as ``np.bincount``'s."""
    cdef Py_ssize_t n = probability.shape[0], groups = 0, i, g
    for i in range(n):
        if templates[i] >= groups:
            groups = templates[i] + 1
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] result = out
    cdef double *sums = <double *> calloc(2 * groups + 1, sizeof(double))
    cdef int64_t *sizes = <int64_t *> calloc(groups + 1, sizeof(int64_t))
    if sums == NULL or sizes == NULL:
        free(sums)
        free(sizes)
        raise MemoryError()
    with nogil:
        for i in range(n):
            g = templates[i]
            sizes[g] += 1
            sums[2 * g] += probability[i] * weights[i]
            sums[2 * g + 1] += weights[i]
        for i in range(n):
            g = templates[i]
            if sizes[g] >= min_size:
                result[i] = (1.0 - mix) * probability[i] + mix * (sums[2 * g] / sums[2 * g + 1])
            else:
                result[i] = probability[i]
    free(sums)
    free(sizes)
    return out

# --- CETD ---------------------------------------------------------------------------------


def cetd_counts(
    const int64_t[::1] parent,
    const unsigned char[::1] is_text,
    const int64_t[::1] text_len,
    const unsigned char[::1] is_link,
    bint link_only_elements_as_links,
):
    """``(chars, tags, link_chars, link_tags)`` of every node as float64 arrays: what
    ``cetd._node_counts`` computes with subtree sums (``cumsum`` differences), here one pass down
    the tree (inside a link or not) and one pass up (in reverse document order a node's subtree
    is complete when it is reached).  All sums are of integers: the same values."""
    cdef Py_ssize_t n = parent.shape[0], i, p
    chars_out = np.zeros(n, dtype=np.float64)
    tags_out = np.zeros(n, dtype=np.float64)
    link_chars_out = np.zeros(n, dtype=np.float64)
    link_tags_out = np.zeros(n, dtype=np.float64)
    cdef double[::1] chars_f = chars_out, tags_f = tags_out, link_chars_f = link_chars_out
    cdef double[::1] link_tags_f = link_tags_out
    if n == 0:
        return chars_out, tags_out, link_chars_out, link_tags_out
    # per node: 0 chars, 1 link chars, 2 elements, 3 leaves outside links, 4 link-like elements,
    # 5 element children
    cdef int64_t *sums = <int64_t *> calloc(6 * n, sizeof(int64_t))
    cdef unsigned char *in_link = <unsigned char *> malloc(n)
    if sums == NULL or in_link == NULL:
        free(sums)
        free(in_link)
        raise MemoryError()
    cdef int64_t *s
    cdef bint element, outside, link_like
    try:
        with nogil:
            for i in range(n):
                p = parent[i]
                in_link[i] = is_link[i] or (p >= 0 and in_link[p])
            for i in range(n - 1, -1, -1):
                s = sums + 6 * i
                element = not is_text[i]
                s[0] += text_len[i]
                s[1] += text_len[i] * in_link[i]
                s[2] += element
                link_like = element and in_link[i]
                if link_only_elements_as_links and element and not in_link[i]:
                    outside = True
                    if s[5] == 0:
                        s[3] += 1  # a leaf element outside links
                    elif s[0] == s[1] and s[3] == 0:
                        link_like = True
                s[4] += link_like
                chars_f[i] = <double> s[0]
                link_chars_f[i] = <double> s[1]
                tags_f[i] = <double> (s[2] - 1) if element else 0.0
                link_tags_f[i] = <double> (s[4] - link_like)
                p = parent[i]
                if p >= 0:
                    sums[6 * p] += s[0]
                    sums[6 * p + 1] += s[1]
                    sums[6 * p + 2] += s[2]
                    sums[6 * p + 3] += s[3]
                    sums[6 * p + 4] += s[4]
                    sums[6 * p + 5] += element
    finally:
        free(sums)
        free(in_link)
    return chars_out, tags_out, link_chars_out, link_tags_out


def composite_terms(
    const double[::1] chars,
    const double[::1] tags,
    const double[::1] link_chars,
    const double[::1] link_tags,
    double body_link_ratio,
    double e,
):
    """The terms of CETD's composite text density (``cetd.composite_text_density``) before its
    logarithms, each as numpy's steps round it: ``(3, n)``, the argument of the base's ``ln``
    (``C/¬LC · LC + LC_b/C_b · C + e``), the argument of the other ``ln`` (``C·T / (LC·LT)``) and
    ``C / T`` (``C`` 1 for a node without characters, zero denominators 1).  numpy's ``log`` takes
    the first two rows (and the base's again) and :func:`composite_finish` divides."""
    cdef Py_ssize_t n = chars.shape[0], i
    out = np.empty((3, n), dtype=np.float64)
    cdef double[:, ::1] terms = out
    cdef double c, t, lc, lt, non_link
    with nogil:
        for i in range(n):
            c = chars[i]
            t = tags[i] if tags[i] > 1.0 else 1.0
            lc = link_chars[i] if link_chars[i] > 1.0 else 1.0
            lt = link_tags[i] if link_tags[i] > 1.0 else 1.0
            non_link = c - link_chars[i]
            if not non_link > 1.0:
                non_link = 1.0
            if not c > 0.0:
                c = 1.0
            terms[0, i] = c / non_link * lc + body_link_ratio * c + e
            terms[1, i] = c * t / (lc * lt)
            terms[2, i] = c / t
    return out


def composite_finish(const double[::1] chars, const double[:, ::1] terms):
    """CETD's composite text density from :func:`composite_terms` after numpy's logarithms (row 0:
    ``ln ln`` of the base's argument, row 1: ``ln`` of the other): ``C/T · ln x / ln B``, 0 for
    a node without characters."""
    cdef Py_ssize_t n = chars.shape[0], i
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] value = out
    with nogil:
        for i in range(n):
            value[i] = terms[2, i] * terms[1, i] / terms[0, i] if chars[i] > 0.0 else 0.0
    return out


def density_sums(const int64_t[::1] parent, const double[::1] density, const unsigned char[::1] is_element):
    """CETD's DensitySum with the text children counted (``cetd.density_sum``): for an element the
    sum of its children's ``density`` (added in document order, as ``children_sum``), or its own
    density without children; ``-inf`` for the nodes not ``is_element``."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.zeros(n, dtype=np.float64)
    cdef double[::1] acc = out
    cdef int64_t *children = <int64_t *> calloc(n + 1, sizeof(int64_t))
    if children == NULL:
        raise MemoryError()
    with nogil:
        for i in range(1, n):
            if parent[i] >= 0:
                acc[parent[i]] += density[i]
                children[parent[i]] += 1
        for i in range(n):
            if not is_element[i]:
                acc[i] = -INFINITY
            elif children[i] == 0:
                acc[i] = density[i]
    free(children)
    return out


def children_sum(const int64_t[::1] parent, const double[::1] values):
    """For every node the sum of ``values`` over its children, added in document order (the
    order of ``np.bincount(parent[1:], weights=values[1:])``: the same sums)."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.zeros(n, dtype=np.float64)
    cdef double[::1] acc = out
    with nogil:
        for i in range(1, n):
            if parent[i] >= 0:
                acc[parent[i]] += values[i]
    return out


def subtree_argmax(
    const int64_t[::1] parent, const double[::1] values, const int64_t[::1] nodes, double floor
):
    """For each of ``nodes`` the first node (document order) of its subtree with the largest
    finite value of at least ``floor``, -1 when there is none: one pass up the tree (the best of
    a subtree is the best of the node and its children's bests; ties go to the earlier node)."""
    cdef Py_ssize_t n = parent.shape[0], i, p, k, b, q
    result = np.full(nodes.shape[0], -1, dtype=np.int64)
    cdef int64_t[::1] out = result
    if n == 0:
        return result
    cdef int64_t *best = <int64_t *> malloc(n * sizeof(int64_t))
    if best == NULL:
        raise MemoryError()
    cdef double v
    try:
        with nogil:
            for i in range(n):
                v = values[i]
                best[i] = i if (v >= floor and v - v == 0.0) else -1  # (v - v: NaN unless finite)
            for i in range(n - 1, 0, -1):
                p = parent[i]
                b = best[i]
                if p < 0 or b < 0:
                    continue
                q = best[p]
                # b is later in document order than p and everything p took so far from the
                # earlier children... only a strictly larger value, or an equal one found earlier
                if q < 0 or values[b] > values[q] or (values[b] == values[q] and b < q):
                    best[p] = b
            for k in range(nodes.shape[0]):
                out[k] = best[nodes[k]]
    finally:
        free(best)
    return result


# --- CoreEx --------------------------------------------------------------------------------


def coreex_pass(
    const int64_t[::1] parent,
    const unsigned char[::1] is_text,
    const unsigned char[::1] is_link,
    const unsigned char[::1] ignored_roots,
    const int64_t[::1] words,
    double subset_threshold,
    double weight_ratio,
    double weight_text,
):
    """CoreEx's counts and scores (``coreex.coreex_counts`` and ``coreex_scores``) in three
    passes: down the tree (ignored, inside a link), up (``textCnt``, ``linkCnt``: integer sums)
    and over the nodes in document order (the children's set sums, added in the order of
    ``np.bincount``; every score is the same IEEE expression as numpy's): returns ``(text_cnt,
    link_cnt, counted, own_link, ignored, score, in_set, set_text, set_link)``."""
    cdef Py_ssize_t n = parent.shape[0], i, p
    text_out = np.zeros(n, dtype=np.int64)
    link_out = np.zeros(n, dtype=np.int64)
    counted_out = np.zeros(n, dtype=np.bool_)
    own_link_out = np.zeros(n, dtype=np.bool_)
    ignored_out = np.zeros(n, dtype=np.bool_)
    score_out = np.empty(n, dtype=np.float64)
    in_set_out = np.zeros(n, dtype=np.bool_)
    set_text_out = np.zeros(n, dtype=np.float64)
    set_link_out = np.zeros(n, dtype=np.float64)
    cdef int64_t[::1] text_cnt = text_out, link_cnt = link_out
    cdef unsigned char[::1] counted = counted_out.view(np.uint8), own_link = own_link_out.view(np.uint8)
    cdef unsigned char[::1] ignored = ignored_out.view(np.uint8), in_set = in_set_out.view(np.uint8)
    cdef double[::1] score = score_out, set_text = set_text_out, set_link = set_link_out
    cdef double text_f, ratio, safe, page_text, inf = float("inf")
    if n == 0:
        return text_out, link_out, counted_out, own_link_out, ignored_out, score_out, in_set_out, set_text_out, set_link_out
    cdef unsigned char *in_link = <unsigned char *> malloc(n)
    if in_link == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                p = parent[i]
                ignored[i] = ignored_roots[i] or (p >= 0 and ignored[p])
                in_link[i] = is_link[i] or (p >= 0 and in_link[p])
                counted[i] = not ignored[i] and not (in_link[i] and not is_link[i])
                own_link[i] = is_link[i] and counted[i]
                text_cnt[i] = words[i] * (counted[i] and is_text[i]) + own_link[i]
                link_cnt[i] = own_link[i]
            for i in range(n - 1, 0, -1):
                p = parent[i]
                if p >= 0:
                    text_cnt[p] += text_cnt[i]
                    link_cnt[p] += link_cnt[i]
            for i in range(n):
                text_f = <double> text_cnt[i]
                if text_cnt[i] > 0:
                    ratio = (text_f - <double> link_cnt[i]) / (text_f if text_f > 1.0 else 1.0)
                else:
                    ratio = -inf
                in_set[i] = counted[i] and ratio > subset_threshold
            for i in range(1, n):
                p = parent[i]
                if p >= 0:
                    set_text[p] += <double> text_cnt[i] * in_set[i]
                    set_link[p] += <double> link_cnt[i] * <double> in_set[i]
            page_text = <double> text_cnt[0] if text_cnt[0] > 1 else 1.0
            for i in range(n):
                if counted[i] and not is_text[i] and not own_link[i] and set_text[i] > 0:
                    safe = set_text[i] if set_text[i] > 1.0 else 1.0
                    score[i] = weight_ratio * (set_text[i] - set_link[i]) / safe + weight_text * set_text[i] / page_text
                else:
                    score[i] = -inf
    finally:
        free(in_link)
    return text_out, link_out, counted_out, own_link_out, ignored_out, score_out, in_set_out, set_text_out, set_link_out


def density_sum_select(
    const int64_t[::1] parent,
    const int64_t[::1] end,
    const unsigned char[::1] is_text,
    const unsigned char[::1] is_block,
    const double[::1] density,
    const double[::1] sums,
    double lambda_,
    bint multiple_blocks,
    double block_min_sum_ratio,
    double prune_ratio,
    bint keep_path_text,
):
    """``cetd.extract_by_density_sum`` in passes over the nodes: ``(text_mask, threshold, target,
    blocks, pruned)``, or None where the numpy code must decide (a NaN, no element on the path).
    The same comparisons on the same values: the same selection."""
    cdef Py_ssize_t n = parent.shape[0], i, p, target = -1, blocks = 0, pruned = 0
    cdef double best_sum = 0.0, low, floor, v, inf = float("inf")
    if n == 0:
        return None
    for i in range(n):  # np.argmax: the first maximum (a NaN would win: the numpy code decides)
        v = sums[i]
        if v != v:
            return None
        if target < 0 or v > best_sum:
            target, best_sum = i, v
    low = inf
    cdef bint found = False
    for i in range(target + 1):  # the elements on the path from <body> to target
        if end[i] > target and not is_text[i]:
            if density[i] != density[i]:
                return None
            found = True
            if density[i] < low:
                low = density[i]
    if not found:
        return None
    cdef double threshold = lambda_ * low
    mask_out = np.zeros(n, dtype=np.bool_)
    cdef unsigned char[::1] text_mask = mask_out.view(np.uint8)
    cdef unsigned char *work = <unsigned char *> calloc(4 * n, 1)
    cdef int64_t *best = <int64_t *> malloc(n * sizeof(int64_t))
    cdef int64_t *cover = <int64_t *> malloc(n * sizeof(int64_t))
    if work == NULL or best == NULL or cover == NULL:
        free(work)
        free(best)
        free(cover)
        raise MemoryError()
    # work: 0 root, 1 below the threshold or inside such (then: weak or inside), 2 has a root below, 3 spare
    cdef unsigned char *root = work
    cdef unsigned char *below = work + n
    cdef unsigned char *rooted = work + 2 * n
    cdef Py_ssize_t b, q
    try:
        with nogil:
            root[target] = 1
            if multiple_blocks:
                floor = block_min_sum_ratio * sums[target] if block_min_sum_ratio > 0 else -inf
                for i in range(n):
                    v = sums[i]
                    best[i] = i if (v >= floor and v - v == 0.0) else -1
                for i in range(n - 1, 0, -1):  # the subtree argmax (ties to the earlier node)
                    p = parent[i]
                    b = best[i]
                    if p < 0 or b < 0:
                        continue
                    q = best[p]
                    if q < 0 or sums[b] > sums[q] or (sums[b] == sums[q] and b < q):
                        best[p] = b
                for i in range(n):  # visited: an element not inside an element below the threshold
                    p = parent[i]
                    below[i] = (not is_text[i] and density[i] < threshold) or (p >= 0 and below[p])
                    if not is_text[i] and not below[i] and best[i] >= 0:
                        root[best[i]] = 1
            for i in range(n):  # roots on the path down from <body>, this one included
                p = parent[i]
                cover[i] = (cover[p] if p >= 0 else 0) + root[i]
            for i in range(n):  # the content blocks: roots not nested in another root
                root[i] = root[i] and cover[i] == 1
                blocks += root[i]
            for i in range(n):  # weak block-level children of a root and their subtrees
                p = parent[i]
                below[i] = 0
                if prune_ratio > 0 and p >= 0 and root[p] and is_block[i] and density[i] < prune_ratio * density[p]:
                    below[i] = 1
                    pruned += 1
                if p >= 0 and below[p]:
                    below[i] = 1
            for i in range(n - 1, -1, -1):  # a content root in the subtree (the node included)
                rooted[i] = rooted[i] or root[i]
                p = parent[i]
                if p >= 0 and rooted[i]:
                    rooted[p] = 1
            for i in range(n):
                p = parent[i]
                if is_text[i]:
                    text_mask[i] = cover[i] > 0 and not below[i]
                    if keep_path_text and p >= 0 and rooted[p] and cover[p] == 0:
                        text_mask[i] = 1
    finally:
        free(work)
        free(best)
        free(cover)
    return mask_out, threshold, target, blocks, pruned


# --- UTF-8 validation (the page's bytes, without decoding them) ----------------------------


def utf8_check(const unsigned char[::1] data):
    """``(valid, characters, ascii)`` of ``data``: whether ``data.decode("utf-8")`` succeeds (the
    strict decoder's rules: no overlong forms, no surrogates, nothing above U+10FFFF), how many
    characters it gives and whether every byte is ASCII; 32 or 8 ASCII bytes are checked at once."""
    cdef Py_ssize_t n = data.shape[0], i = 0, chars = 0
    cdef const unsigned char *b
    cdef unsigned char c, c1
    cdef uint64_t word, w1, w2, w3
    cdef bint ascii = True
    if n == 0:
        return True, 0, True
    b = &data[0]
    while i < n:
        if i + 32 <= n:  # (32 ASCII bytes at once, then 8)
            memcpy(&word, b + i, 8)
            memcpy(&w1, b + i + 8, 8)
            memcpy(&w2, b + i + 16, 8)
            memcpy(&w3, b + i + 24, 8)
            if ((word | w1 | w2 | w3) & 0x8080808080808080ULL) == 0:
                i += 32
                chars += 32
                continue
        if i + 8 <= n:
            memcpy(&word, b + i, 8)
            if (word & 0x8080808080808080ULL) == 0:
                i += 8
                chars += 8
                continue
        c = b[i]
        if c < 0x80:
            i += 1
            chars += 1
            continue
        ascii = False
        if 0xC2 <= c <= 0xDF:
            if i + 1 >= n or (b[i + 1] & 0xC0) != 0x80:
                return False, 0, False
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if i + 2 >= n or (b[i + 2] & 0xC0) != 0x80:
                return False, 0, False
            c1 = b[i + 1]
            if (c == 0xE0 and not (0xA0 <= c1 <= 0xBF)) or (c == 0xED and not (0x80 <= c1 <= 0x9F)) or (
                c != 0xE0 and c != 0xED and (c1 & 0xC0) != 0x80
            ):
                return False, 0, False
            i += 3
        elif 0xF0 <= c <= 0xF4:
            if i + 3 >= n or (b[i + 2] & 0xC0) != 0x80 or (b[i + 3] & 0xC0) != 0x80:
                return False, 0, False
            c1 = b[i + 1]
            if (c == 0xF0 and not (0x90 <= c1 <= 0xBF)) or (c == 0xF4 and not (0x80 <= c1 <= 0x8F)) or (
                c != 0xF0 and c != 0xF4 and (c1 & 0xC0) != 0x80
            ):
                return False, 0, False
            i += 4
        else:
            return False, 0, False
        chars += 1
    return True, chars, ascii


# --- the blocks of a page (methods.blocks.page_blocks) -------------------------------------


def block_runs(const int64_t[::1] seq, const int64_t[::1] stripped):
    """``(text_block, kept, first)`` of the text nodes whose block numbers are ``seq`` (runs of
    equal values) and stripped lengths ``stripped``: the runs with some non-space text are the
    blocks, numbered in order; ``text_block`` is each text node's block (-1 outside one), ``kept``
    the text nodes in blocks and ``first`` each block's first text node (all indices into the text
    nodes), what ``page_blocks``'s numpy steps give."""
    cdef Py_ssize_t n = seq.shape[0], start = 0, stop, i, blocks = 0, kept_count = 0
    cdef bint has_text
    text_block_out = np.empty(n, dtype=np.int64)
    kept_out = np.empty(n, dtype=np.int64)
    first_out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] text_block = text_block_out
    cdef int64_t[::1] kept = kept_out
    cdef int64_t[::1] first = first_out
    while start < n:
        stop = start + 1
        has_text = stripped[start] > 0
        while stop < n and seq[stop] == seq[start]:
            has_text = has_text or stripped[stop] > 0
            stop += 1
        if has_text:
            first[blocks] = start
            for i in range(start, stop):
                text_block[i] = blocks
                kept[kept_count] = i
                kept_count += 1
            blocks += 1
        else:
            for i in range(start, stop):
                text_block[i] = -1
        start = stop
    return text_block_out, kept_out[:kept_count], first_out[:blocks]


# --- visible characters ------------------------------------------------------------------


cdef unsigned char _NOT_COUNTED[256]
for _c in (32, 10, 9, 13, 12, 11, 0xA0):  # " \n\t\r\f\v" and the no-break space
    _NOT_COUNTED[_c] = 1


def non_space_chars(str text):
    """How many characters of ``text`` are none of " \\n\\t\\r\\f\\v" and the no-break space
    (:func:`~contentx_udf.page.document.non_space_chars`), counted over the string's own data."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, count = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef const unsigned char *chars
    cdef Py_UCS4 ch
    if kind == PyUnicode_1BYTE_KIND:
        chars = <const unsigned char *> data
        for i in range(n):
            count += not _NOT_COUNTED[chars[i]]
        return count
    for i in range(n):
        ch = PyUnicode_READ(kind, data, i)
        count += not (ch < 256 and _NOT_COUNTED[ch])
    return count

