"""Small helpers on Arrow string arrays and ragged (offset-indexed) numpy arrays."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def as_strings(values: Sequence[str | None] | pa.Array | pa.ChunkedArray) -> pa.Array:
    """``values`` as one contiguous Arrow ``large_string`` array (nulls kept)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(list(values), pa.large_string())
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if values.type != pa.large_string():
        values = values.cast(pa.large_string())
    return values


_REGEX_SPECIAL = re.compile(r"([\\.^$|?*+()\[\]{}])")


def literal_pattern(literal: str) -> str:
    """An RE2 pattern matching ``literal`` (its metacharacters escaped)."""
    return _REGEX_SPECIAL.sub(r"\\\1", literal)


def count_literal(strings: pa.Array, literal: str) -> np.ndarray:
    """Per string: non-overlapping occurrences of ``literal`` (``str.count``).  Through RE2:
    pyarrow's ``count_substring`` reads a few MB of text ten to twenty times slower."""
    found = pc.count_substring_regex(strings, literal_pattern(literal))
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def contains_literal(strings: pa.Array, literal: str) -> np.ndarray:
    """Per string: ``literal in string`` (RE2, as :func:`count_literal`: pyarrow's
    ``find_substring`` and ``match_substring`` are much slower on long texts)."""
    found = pc.match_substring_regex(strings, literal_pattern(literal))
    return found.to_numpy(zero_copy_only=False).astype(bool)


def list_offsets(lists: pa.ListArray | pa.LargeListArray) -> np.ndarray:
    """The offsets of a list array, from 0, as int64."""
    offsets = lists.offsets.to_numpy()
    return (offsets - offsets[0]).astype(np.int64)


def string_offsets(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, data)`` of a string array: byte offsets (int64, one more than the strings) and
    its data buffer as uint8."""
    width = np.int64 if strings.type in (pa.large_string(), pa.large_binary()) else np.int32
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], dtype=width)[strings.offset : strings.offset + len(strings) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64), data


def ragged_index(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(starts[i], starts[i] + lengths[i])`` for every ``i``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(
        np.asarray(starts, np.int64) - (ends - lengths), lengths
    )


def cut_bytes(strings: pa.Array, head: np.ndarray, tail: np.ndarray) -> pa.Array:
    """Each string without its first ``head[i]`` and last ``tail[i]`` bytes (whole characters:
    the counts come from ``binary_length`` of pieces of the same strings)."""
    offsets, data = string_offsets(strings)
    starts = offsets[:-1] + head
    lengths = np.maximum(offsets[1:] - tail - starts, 0)
    new_data = data[ragged_index(starts, lengths)]
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return pa.Array.from_buffers(
        pa.large_string(), len(strings), [None, pa.py_buffer(new_offsets), pa.py_buffer(new_data.tobytes())]
    )


def byte_lengths(strings: pa.Array) -> np.ndarray:
    return pc.binary_length(strings).to_numpy(zero_copy_only=False).astype(np.int64)


def split_on(strings: pa.Array, pattern: str = " ") -> tuple[pa.Array, np.ndarray]:
    """The non-empty pieces of every string between occurrences of ``pattern`` (a literal), flat,
    and each string's offsets into them."""
    lists = pc.split_pattern(strings, pattern)
    return _drop_empty(lists)


def split_whitespace(strings: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The pieces of every string between runs of (Unicode) whitespace, flat, and each string's
    offsets into them, as ``str.split()`` cuts."""
    return _drop_empty(pc.utf8_split_whitespace(strings))


def _drop_empty(lists: pa.ListArray | pa.LargeListArray) -> tuple[pa.Array, np.ndarray]:
    offsets = list_offsets(lists)
    flat = lists.flatten()
    empty = pc.equal(pc.binary_length(flat), 0).to_numpy(zero_copy_only=False)
    if not empty.any():
        return flat, offsets
    kept = np.concatenate(([0], np.cumsum(~empty)))
    return flat.filter(pa.array(~empty)), kept[offsets]


def replace_at(values: pa.Array, index: np.ndarray, new_values: pa.Array) -> pa.Array:
    """``values`` with ``values[index[j]]`` replaced by ``new_values[j]``."""
    if len(index) == 0:
        return values
    take = np.arange(len(values), dtype=np.int64)
    take[index] = len(values) + np.arange(len(index))
    return pa.concat_arrays([values, new_values.cast(values.type)]).take(take)
