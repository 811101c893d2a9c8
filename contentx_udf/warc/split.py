"""Pieces of one gzip WARC file: where a record starts at or after a byte offset.

A ``.warc.gz`` is a series of gzip members, one record each (the WARC standard's annex D,
what Common Crawl writes and indexes).  A reader that starts at any byte offset finds the next
record by searching for a gzip member header (``1f 8b 08``) whose member inflates to a WARC
record header (``WARC/1.``), as Hadoop's line reader finds the next line of a split.  A piece
``[start, end)`` of a file holds the records that start in it; :class:`~.reader.WarcReader`'s
``end`` stops reading there.

The search can be fooled only by bytes that look like such a member inside another record: a
payload holding a gzip WARC stored uncompressed (deflate's stored blocks).  The pieces say where
they started and where the next record after their end was (:class:`PieceBounds`); the job
checks that each piece starts where the previous one stopped and reads the file whole where
they disagree (:func:`contentx_udf.spark.split.check_pieces`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import BinaryIO

#: A gzip member header with the deflate method (RFC 1952, 2.3.1).
GZIP_MEMBER_HEAD = b"\x1f\x8b\x08"
#: What a WARC record's member inflates to first (WARC/1.0, WARC/1.1).
WARC_HEAD = b"WARC/1."
#: Bytes read at a time while searching, and at most while checking one candidate member (a
#: member header and the deflate bits of its first 7 bytes take well under 100; a header with
#: longer optional fields than this is not recognised: the pieces then do not chain and the job
#: reads the file whole).
SEARCH_BLOCK = 1 << 16
CHECK_BYTES = 1 << 12


@dataclass
class PieceBounds:
    """Where a piece's reading started and stopped (byte offsets in the file; None: none).

    ``first``: the offset of its first record; ``next``: the offset of the first record at or
    after the piece's end, where the next piece must start (None: it read to the end of the file
    or stopped on damage)."""

    first: int | None
    next: int | None


def starts_warc_member(data: bytes) -> bool:
    """True when ``data`` begins with a gzip member that inflates to a WARC record header."""
    if not data.startswith(GZIP_MEMBER_HEAD):
        return False
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)  # (gzip header checked by zlib)
    try:
        out = inflate.decompress(data, len(WARC_HEAD))
    except zlib.error:
        return False
    return out == WARC_HEAD


def record_start(stream: BinaryIO, start: int, limit: int) -> int | None:
    """The offset of the first gzip member at or after ``start`` and before ``limit`` that holds a
    WARC record (:func:`starts_warc_member`), or None.  ``stream``: seekable, binary."""
    pos = start
    while pos < limit:
        stream.seek(pos)
        block = stream.read(SEARCH_BLOCK + len(GZIP_MEMBER_HEAD) - 1)
        if not block:
            return None
        at = block.find(GZIP_MEMBER_HEAD)
        while at >= 0 and pos + at < limit:
            stream.seek(pos + at)
            if starts_warc_member(stream.read(CHECK_BYTES)):
                return pos + at
            at = block.find(GZIP_MEMBER_HEAD, at + 1)
        pos += SEARCH_BLOCK
    return None


def splittable(stream: BinaryIO) -> bool:
    """True when the file starts with a gzip member holding a WARC record: its records can be read
    in pieces.  (Uncompressed WARCs are read whole: a record header inside a payload cannot be
    told from a real one without reading from the file's start.)"""
    stream.seek(0)
    return starts_warc_member(stream.read(CHECK_BYTES))
