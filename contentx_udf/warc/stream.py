"""The input stream under warcio: byte counting, I/O errors, unfinished gzip members, empty files."""

from __future__ import annotations

import zlib
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from .payload import READ_BLOCK
from .sniff import GZIP_MAGIC

_EMPTY_CHECK_MAX = 65_536  # files up to this size are checked for "only whitespace"


class CountingReader:
    """Wraps the caller's stream: counts bytes, keeps the first bytes, remembers I/O errors."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        try:
            start = raw.tell()
            self.pos = start if isinstance(start, int) and start >= 0 else 0
        except Exception:
            self.pos = 0
        self.start = self.pos
        self.head = bytearray()
        self.eof = False
        self.io_error: BaseException | None = None

    def read(self, size: int = -1) -> bytes:
        try:
            data = self.raw.read(size) if size is not None and size >= 0 else self.raw.read()
        except Exception as exc:
            self.io_error = exc
            raise
        if data is None:  # non-blocking raw stream with nothing available: treat as EOF
            data = b""
        if not data and size != 0:
            self.eof = True
        if len(self.head) < _EMPTY_CHECK_MAX + 1:
            self.head += data[: _EMPTY_CHECK_MAX + 1 - len(self.head)]
        self.pos += len(data)
        return data

    def tell(self) -> int:
        return self.pos

    def drain(self, cap: int | None = None) -> None:
        """Read to EOF (or until ``cap`` more bytes were read), discarding."""
        done = 0
        while not self.eof and (cap is None or done <= cap):
            done += len(self.read(READ_BLOCK))


def reraise_io_error(src: CountingReader, exc: BaseException) -> None:
    """Re-raise an I/O error of the underlying stream (not a content problem: the caller may retry)."""
    if src.io_error is not None:
        if src.io_error is exc:
            raise exc
        raise src.io_error from exc


def gzip_member_unfinished(archive: ArchiveIterator, src: CountingReader) -> bool:
    """After a record was read to its end: is its gzip member incomplete with no input left?

    warcio reads on at a member's end until the decompressor sees the member's trailer (then
    ``eof``) or the input runs out; a member that ends without trailer means a cut file or a
    corrupt trailer (warcio swallows the zlib error there).
    """
    reader = getattr(archive, "reader", None)
    decompressor = getattr(reader, "decompressor", None)
    if reader is None or decompressor is None:
        return False  # uncompressed file
    return not decompressor.eof and not decompressor.unused_data and src.eof and reader.rem_length() == 0


def whitespace_only(src: CountingReader, rec: Any) -> bool:
    """True when the whole input (small, plain or gzip) holds nothing but whitespace."""
    if rec is not None:
        if rec.rec_headers.headers or (rec.rec_headers.protocol or "").strip():
            return False
    src.drain(_EMPTY_CHECK_MAX)
    if not src.eof or src.pos - src.start > _EMPTY_CHECK_MAX:
        return False
    data = bytes(src.head)
    if data[:2] == GZIP_MAGIC:
        out = bytearray()
        try:
            while data:
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                out += d.decompress(data, _EMPTY_CHECK_MAX)
                if not d.eof or len(out) > _EMPTY_CHECK_MAX:
                    return False
                data = d.unused_data
        except zlib.error:
            return False
        data = bytes(out)
    return not data.strip()
