"""Word segmentation for every script: one entry point, a rule per language.

API shared by the filters (``corpus/quality``) and near dedup (``corpus/minhash``):

* :func:`segmenter_for` -- the segmenter name of a FineWeb-2 language key (``iso639-3_Script``,
  e.g. ``deu_Latn``, ``cmn_Hani``) or None (today's splitter);
* :func:`split_words_with` -- the words of a batch of strings by one segmenter, as
  :class:`~contentx_udf.text.words.Words`;
* :func:`spaced_for_minhash` -- texts with a space inserted between the dictionary words of runs
  in scripts written without spaces, so that near dedup's byte-level word split sees words.

STUB: every language uses today's splitter (spaCy's English rules) until the segmenters land.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from .arrays import as_strings
from .words import Words, split_words

#: Today's splitter: spaCy's blank English tokenizer rules (:mod:`.words`).
DEFAULT = "spaces"

SEGMENTERS = (DEFAULT,)


def segmenter_for(key: str | None) -> str:
    """The segmenter of a FineWeb-2 language key (``deu_Latn``) or of None."""
    return DEFAULT


def split_words_with(texts: Sequence[str] | pa.Array, segmenter: str = DEFAULT) -> Words:
    """The words of every string of ``texts`` (no nulls) by ``segmenter``."""
    if segmenter not in SEGMENTERS:
        raise ValueError(f"unknown segmenter {segmenter!r}; known: {', '.join(SEGMENTERS)}")
    return split_words(as_strings(texts))


def spaced_for_minhash(texts: pa.Array) -> pa.Array:
    """``texts`` with spaces between the words of runs in scripts without spaces (unchanged now)."""
    return texts
