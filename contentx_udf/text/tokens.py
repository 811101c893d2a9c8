"""Token counts and token ids with any Hugging Face ``tokenizers`` tokenizer (a ``tokenizer.json``).

The count of a text is ``len(tokenizer.encode(text, add_special_tokens=False).ids)``: the text's
own tokens, without the special tokens the tokenizer's post-processor would add (a BOS, a CLS);
``count_eos`` adds one per document (the end-of-document token a trainer appends).  The
tokenizer's truncation and padding, when its file sets them, are switched off: a count is the
whole text's.

A tokenizer that splits text as GPT-2 does (no normalizer, the ``ByteLevel`` regex split: GPT-2,
RoBERTa, and the BPEs trained as the benchmarks and tests train theirs) is counted and encoded by a
compiled counter, exact and some 30 times the library's rate (:mod:`.bytelevel`); the others, and
the texts holding an added token's content, are encoded by the library a batch at a time
(``encode_batch_fast``: no offsets).  The library's Rust
thread pool (Rayon) is held to the task's cores: :func:`hold_threads` sets ``RAYON_NUM_THREADS``
and ``TOKENIZERS_PARALLELISM`` before ``tokenizers`` is first imported in the process, so a
Spark Python worker, which runs one task on one core, encodes on its own thread only
(tests/text/test_tokens.py counts the process's threads).

The tokenizer is read on the driver (:func:`load_spec`, one :class:`UserError` line for a file
that is missing or not a tokenizer) and travels to the workers as its JSON text; each worker
process builds it once (:func:`tokenizer_of`, keyed by the file's SHA-256).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import UserError

#: What the count is (written in reports and dataset cards).
COUNT_RULE = "len(tokenizer.encode(text, add_special_tokens=False).ids)"
#: Texts per ``encode_batch`` call (a few MB of text).
ENCODE_BATCH = 1024
#: The largest vocabulary whose ids fit in two bytes (datatrove: uint16 tokens below it).
UINT16_VOCAB = np.iinfo(np.uint16).max + 1


@dataclass(frozen=True)
class TokenizerSpec:
    """A tokenizer as the driver read it: ``path`` as given, its ``json`` text (what the workers
    build it from), ``sha256`` of that text, ``vocab_size`` (with added tokens)."""

    path: str
    json: str
    sha256: str
    vocab_size: int

    def describe(self, count_eos: bool = False) -> dict[str, Any]:
        """The report's and the card's record of it (no JSON text)."""
        return {
            "path": self.path,
            "sha256": self.sha256,
            "vocab_size": self.vocab_size,
            "count": COUNT_RULE + (" + 1 (--count-eos)" if count_eos else ""),
        }


def hold_threads(cores: int | None = None) -> None:
    """Hold the ``tokenizers`` Rust pool to ``cores`` threads (default: the Spark task's cores,
    else 1).  With one core the library does not start its pool at all (``TOKENIZERS_PARALLELISM
    = false``: ``encode_batch`` encodes on the calling thread).  Effective only before the pool
    starts, i.e. before the process's first parallel encode: called before every import."""
    if cores is None:
        cores = 1
        try:
            from pyspark import TaskContext

            context = TaskContext.get()
            if context is not None:
                cores = max(1, int(context.cpus()))
        except Exception:
            pass
    os.environ["RAYON_NUM_THREADS"] = str(cores)
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if cores > 1 else "false"


def _build(text: str):
    hold_threads()
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(text)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def load_spec(path: str, flag: str = "--tokenizer") -> TokenizerSpec:
    """Read and check a ``tokenizer.json`` on the driver; UserError (one line) when it cannot be
    read, the ``tokenizers`` library is missing, or the file is not a tokenizer."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise UserError(f"{flag} {path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{flag} {path}: is a directory, not a tokenizer.json") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{flag} {path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        raise UserError(f"{flag} needs the `tokenizers` library: pip install 'contentx[tokens]'") from None
    try:
        tokenizer = _build(text)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UserError(f"{flag} {path}: not a tokenizers tokenizer.json ({first})") from None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _CACHE[digest] = tokenizer
    return TokenizerSpec(path, text, digest, int(tokenizer.get_vocab_size(with_added_tokens=True)))


#: Tokenizers built in this process, by the SHA-256 of their JSON text.
_CACHE: dict[str, Any] = {}


def tokenizer_of(spec: TokenizerSpec):
    """The tokenizer of ``spec``, built once per process."""
    found = _CACHE.get(spec.sha256)
    if found is None:
        found = _CACHE[spec.sha256] = _build(spec.json)
    return found


def token_id(spec: TokenizerSpec, token: str, flag: str = "--eos-token") -> int:
    """The id of ``token`` in the vocabulary; UserError when it has none."""
    found = tokenizer_of(spec).token_to_id(token)
    if found is None:
        raise UserError(f"{flag} {token!r} is not a token of {spec.path}")
    return int(found)


def _encode(tokenizer, texts: list[str], special: bool):
    fast = getattr(tokenizer, "encode_batch_fast", None)  # tokenizers >= 0.20: no offsets
    for start in range(0, len(texts), ENCODE_BATCH):
        chunk = texts[start : start + ENCODE_BATCH]
        yield from (fast or tokenizer.encode_batch)(chunk, add_special_tokens=special)


#: The compiled counters built in this process (:mod:`.bytelevel`), by tokenizer; None: not served.
_COUNTERS: dict[str, Any] = {}


def counter_of(spec: TokenizerSpec):
    """The fast exact counter of ``spec`` (:class:`.bytelevel.ByteLevelCounter`), or None when the
    tokenizer is not one it serves or the compiled module is missing (the library encodes)."""
    if spec.sha256 not in _COUNTERS:
        from .bytelevel import ByteLevelCounter, served

        facts = served(spec.json)
        counter = None
        if facts is not None:
            try:
                counter = ByteLevelCounter(tokenizer_of(spec), facts)
            except ImportError:  # not compiled
                counter = None
        _COUNTERS[spec.sha256] = counter
    return _COUNTERS[spec.sha256]


def _as_array(texts: pa.Array | list) -> pa.Array:
    if isinstance(texts, pa.ChunkedArray):
        return texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    return texts if isinstance(texts, pa.Array) else pa.array(texts, type=pa.string())


def count_tokens(spec: TokenizerSpec, texts: pa.Array | list, count_eos: bool = False) -> pa.Array:
    """Each text's token count (:data:`COUNT_RULE`, plus one with ``count_eos``) as an ``int64``
    array, null for a null text.  A served tokenizer's texts are counted by the compiled counter
    (:mod:`.bytelevel`), any other's (and the few texts it leaves) by ``encode_batch_fast``."""
    texts = _as_array(texts)
    n = len(texts)
    valid = texts.is_valid().to_numpy(zero_copy_only=False)
    counts = np.zeros(n, dtype=np.int64)
    library = valid
    counter = counter_of(spec)
    if counter is not None and n:
        library = valid & counter.library_rows(texts)
        counts += counter.counts(texts, valid & ~library)
    index = np.flatnonzero(library)
    if len(index):
        values = texts.take(pa.array(index)).to_pylist()
        counts[index] = np.fromiter(
            (len(e) for e in _encode(tokenizer_of(spec), values, False)), dtype=np.int64, count=len(values)
        )
    if count_eos:
        counts[valid] += 1
    return pa.array(counts, type=pa.int64(), mask=~valid if not valid.all() else None)


def token_dtype(vocab_size: int) -> np.dtype:
    """datatrove's token width: little-endian uint16 when every id fits, else uint32."""
    return np.dtype("<u2") if vocab_size <= UINT16_VOCAB else np.dtype("<u4")


def encode_ids(
    spec: TokenizerSpec, texts: pa.Array | list[str], eos_id: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, lengths)`` of ``texts`` (no nulls) as datatrove's ``DocumentTokenizer`` writes
    them: each text encoded with the tokenizer's own special tokens (``encode_batch``'s default),
    or, with ``eos_id``, with its post-processor replaced by ``$A <EOS>`` (the text's tokens, then
    the EOS), as datatrove does for its ``eos_token``.  ``tokens``: all ids end to end.  A served
    tokenizer's texts are encoded by the compiled counter (:mod:`.bytelevel`) when the ids are the
    text's own (with ``eos_id``, or a post-processor that adds none)."""
    texts = _as_array(texts)
    n = len(texts)
    special = eos_id is None
    counter = counter_of(spec)
    library = np.ones(n, dtype=bool)
    tokens = np.zeros(0, dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    if counter is not None and (not special or counter.plain_post) and n:
        library = counter.library_rows(texts)
        tokens, lengths = counter.encode(texts, ~library)
    index = np.flatnonzero(library)
    if len(index):
        pieces = np.split(tokens, np.cumsum(lengths)[:-1]) if n else []
        values = texts.take(pa.array(index)).to_pylist()
        for i, encoding in zip(index, _encode(tokenizer_of(spec), values, special), strict=True):
            pieces[i] = np.asarray(encoding.ids, dtype=np.int64)
            lengths[i] = len(pieces[i])
        tokens = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if eos_id is not None:
        tokens = np.insert(tokens, np.cumsum(lengths), eos_id)
        lengths = lengths + 1
    return tokens, lengths
