"""A record's HTTP body: raw blocks -> de-chunk -> content-decode -> bounded collect.

Payload handling
----------------
The HTTP body is read from ``record.raw_stream`` after warcio has parsed the HTTP headers (never
``content_stream()``: warcio 1.8.1 raises AttributeError on brotli when the brotli package is
installed). Then, in this order:

1. ``Transfer-Encoding: chunked`` is removed when the body really is chunked (the first chunk's
   framing is checked); otherwise the raw bytes are kept and a note says so.
2. ``Content-Encoding`` gzip / x-gzip / deflate (zlib-wrapped or raw) / br is decoded when it is
   honest. When the header lies (ClueWeb09, Wayback/AQL files store plain HTML under
   ``Content-Encoding: gzip``) the raw bytes are kept and a note says so. Unknown codings (zstd,
   compress, ...) are kept raw with a note. Common Crawl's ``X-Crawler-Content-Encoding`` /
   ``X-Crawler-Transfer-Encoding`` headers are *not* acted on (the payload is already decoded).
3. Decompression is bounded: at most ``max_html_bytes + 1`` bytes of output are produced for an
   HTML candidate (1 KiB for a non-HTML record), so zip bombs cost nothing. (The brotli library
   works in internal buffers of ~32 KiB, so it may decode up to that much beyond the bound; it is
   never kept.)

``payload_length`` is the full decoded length when it is known: always for bodies that need no
content decoding (they are counted to the end, cheaply), and for content-encoded bodies that ended
within the bound. It is ``None`` when content decoding was stopped at the bound (a note says so),
and for revisit records. ``payload`` is cut at ``max_html_bytes`` with a note
``"payload cut at 1048576 of 5263139 bytes (max_html_bytes)"``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from .sniff import GZIP_MAGIC

READ_BLOCK = 65_536  # read / decode granularity
_PROBE_BYTES = 4096  # raw bytes gathered before deciding whether a declared encoding is honest
_PROBE_OUTPUT = 262_144  # decoded bytes held back while that decision is pending


class StreamError(Exception):
    """Reading the WARC data itself failed (not our code, not an I/O error)."""


def describe_exc(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    if len(msg) > 300:
        msg = msg[:300] + "..."
    if "non-chunked gzip file detected" in msg:
        return (
            "the whole file is one gzip stream, not one gzip member per record (record offsets would "
            "be meaningless); recompress it with `warcio recompress`"
        )
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


class PayloadState:
    """Shared by the pipeline stages of one body."""

    __slots__ = ("decoding", "stopped")

    def __init__(self) -> None:
        self.decoding = False  # a real decompressor is active: counting to the end is not free
        self.stopped = False  # the outermost decoder stopped at the output bound


def raw_blocks(stream: Any) -> Iterator[bytes]:
    """Read a record body in blocks; failures become StreamError (the reader re-raises I/O errors)."""
    while True:
        try:
            block = stream.read(READ_BLOCK)
        except Exception as exc:
            raise StreamError(str(exc)) from exc
        if not block:
            return
        yield block


def collect_body(
    blocks: Iterator[bytes], want: int | None, state: PayloadState, count_rest: bool
) -> tuple[bytearray, int | None]:
    """Keep the first ``want`` bytes (all if None); count the rest when that costs no decoding.

    Returns (kept bytes, total length or None if unknown).
    """
    kept = bytearray()
    total = 0
    complete = True
    for piece in blocks:
        total += len(piece)
        if want is None:
            kept += piece
            continue
        room = want - len(kept)
        if room > 0:
            kept += piece[:room]
        if len(kept) >= want and (state.decoding or not count_rest):
            complete = False
            break
    if state.stopped:
        complete = False
    return kept, (total if complete else None)


def _first_part(blocks: Iterator[bytes], min_len: int) -> bytes:
    parts: list[bytes] = []
    n = 0
    for block in blocks:
        parts.append(block)
        n += len(block)
        if n >= min_len:
            break
    return b"".join(parts)


def decoded_body(
    blocks: Iterator[bytes],
    transfer_encoding: str | None,
    content_encoding: str | None,
    want: int | None,
    state: PayloadState,
    notes: list[str],
) -> Iterator[bytes]:
    stream: Iterator[bytes] = blocks
    if transfer_encoding:
        codings = [c.strip().lower() for c in transfer_encoding.split(",") if c.strip()]
        if "chunked" in codings:
            stream = _dechunk(stream, notes)
        others = [c for c in codings if c not in ("chunked", "identity")]
        if others:
            notes.append(f"transfer-encoding {', '.join(others)} not decoded")
    if content_encoding:
        codings = [c.strip().lower() for c in content_encoding.split(",")]
        codings = [c for c in codings if c and c not in ("identity", "none")]
        # applied in the listed order by the server, so undone in reverse; the first listed coding
        # is the outermost layer and produces the final output (it gets the output bound)
        for i, coding in enumerate(reversed(codings)):
            outermost = i == len(codings) - 1
            stream = _decode_layer(stream, coding, notes, state, want if outermost else None)
    return stream


_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")
_FIRST_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


def _looks_chunked(head: bytes) -> bool:
    m = _FIRST_CHUNK.match(head)
    if not m:
        return False
    end = m.end() + int(m.group(1), 16)
    if end + 2 <= len(head):
        return head[end : end + 2] == b"\r\n" or head[end : end + 1] == b"\n"
    if end + 1 == len(head):
        return head[end : end + 1] in (b"\r", b"\n")
    return True  # first chunk longer than what we looked at: the size line is all we can check


def _dechunk(blocks: Iterator[bytes], notes: list[str]) -> Iterator[bytes]:
    blocks = iter(blocks)
    buf = bytearray(_first_part(blocks, _PROBE_BYTES))
    if not buf:
        return
    if not _looks_chunked(bytes(buf[:_PROBE_BYTES])):
        notes.append("transfer-encoding chunked declared but body not chunked: kept raw bytes")
        yield bytes(buf)
        yield from blocks
        return

    pos = 0
    produced = 0
    eof = False

    def fill() -> bool:
        nonlocal eof
        block = next(blocks, None)
        if block is None:
            eof = True
            return False
        buf.extend(block)
        return True

    def broken(why: str) -> Iterator[bytes]:
        rest = bytes(buf[pos:])
        if not rest and eof:
            notes.append(f"chunked body {why} after {produced} bytes (no final zero-size chunk)")
            return
        notes.append(f"chunked body malformed after {produced} bytes ({why}): rest kept raw")
        yield rest
        yield from blocks

    while True:
        nl = buf.find(b"\n", pos)
        while nl < 0:
            if len(buf) - pos > 1024 or not fill():
                yield from broken("ends" if eof and pos >= len(buf) else "has a bad chunk-size line")
                return
            nl = buf.find(b"\n", pos)
        m = _CHUNK_LINE.fullmatch(bytes(buf[pos:nl]).strip())
        if not m:
            yield from broken("has a bad chunk-size line")
            return
        size = int(m.group(1), 16)
        pos = nl + 1
        if size == 0:
            return  # trailers, if any, are ignored
        while size > 0:
            if pos >= len(buf):
                del buf[:]
                pos = 0
                if not fill():
                    notes.append(f"chunked body ends inside a chunk after {produced} bytes")
                    return
            take = min(size, len(buf) - pos)
            yield bytes(buf[pos : pos + take])
            pos += take
            size -= take
            produced += take
        while len(buf) - pos < 2 and fill():
            pass
        if buf[pos : pos + 2] == b"\r\n":
            pos += 2
        elif buf[pos : pos + 1] == b"\n":
            pos += 1
        elif pos >= len(buf) and eof:
            notes.append(f"chunked body ends after {produced} bytes (no final zero-size chunk)")
            return
        else:
            yield from broken("misses the CRLF after a chunk")
            return
        if pos > READ_BLOCK:
            del buf[:pos]
            pos = 0


class _ZlibDecoder:
    """gzip (multi-member) / zlib / raw deflate with bounded output per call."""

    def __init__(self, wbits: int) -> None:
        self.wbits = wbits
        self.d = zlib.decompressobj(wbits)
        self.finished = False
        self.trailing = 0
        self._more = False  # last call filled its output bound: more output may be pending

    def _run(self, data: bytes, cap: Callable[[], int]) -> Iterator[bytes]:
        pending = data
        while pending or self._more:
            if self.finished:
                if self.wbits > 16 and pending[:2] == GZIP_MAGIC:  # another gzip member
                    self.d = zlib.decompressobj(self.wbits)
                    self.finished = False
                else:
                    self.trailing += len(pending)
                    self._more = False
                    return
            n = cap()
            out = self.d.decompress(pending, n)
            self._more = len(out) >= n
            if self.d.eof:
                self.finished = True
                self._more = False
                pending = self.d.unused_data
            else:
                pending = self.d.unconsumed_tail
            if out:
                yield out
            elif not pending and not self._more:
                return

    def feed(self, data: bytes, cap: Callable[[], int]) -> Iterator[bytes]:
        return self._run(data, cap)

    def finish(self, cap: Callable[[], int]) -> Iterator[bytes]:
        return self._run(b"", cap)


class _BrotliDecoder:
    def __init__(self) -> None:
        import brotli

        self.brotli = brotli
        self.d = brotli.Decompressor()
        self.trailing = 0
        self._limit_ok = True

    @property
    def finished(self) -> bool:
        return bool(self.d.is_finished())

    def _process(self, data: bytes, n: int) -> bytes:
        if self._limit_ok:
            try:
                return self.d.process(data, output_buffer_limit=n)
            except TypeError:  # brotli < 1.2: no output_buffer_limit; feed small slices instead
                self._limit_ok = False
        out = bytearray()
        for i in range(0, len(data), 1024):
            out += self.d.process(data[i : i + 1024])
        return bytes(out)

    def feed(self, data: bytes, cap: Callable[[], int]) -> Iterator[bytes]:
        if self.finished:
            self.trailing += len(data)
            return
        out = self._process(data, cap())
        if out:
            yield out
        if self._limit_ok:
            while not self.d.can_accept_more_data():
                out = self._process(b"", cap())
                if not out:
                    break
                yield out

    def finish(self, cap: Callable[[], int]) -> Iterator[bytes]:
        while not self.finished:
            out = self._process(b"", cap())
            if not out:
                return
            yield out


def _make_decoder(coding: str, first: bytes) -> tuple[Any | None, str | None]:
    """A decoder for ``coding`` if ``first`` (the first raw bytes) can be that coding, else a note."""
    lie = f"content-encoding {coding} declared but payload not {coding}: kept raw bytes"
    if coding in ("gzip", "x-gzip"):
        if first[:2] != GZIP_MAGIC:
            return None, lie
        return _ZlibDecoder(16 + zlib.MAX_WBITS), None
    if coding == "deflate":
        zlib_header = (
            len(first) >= 2
            and (first[0] & 0x0F) == 8
            and (first[0] >> 4) <= 7
            and ((first[0] << 8) | first[1]) % 31 == 0
        )
        return _ZlibDecoder(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS), None
    if coding == "br":
        try:
            return _BrotliDecoder(), None
        except ImportError:
            return None, "content-encoding br: the brotli package is not installed: kept raw bytes"
    return None, f"content-encoding {coding} not supported: kept raw bytes"


def _decode_layer(
    blocks: Iterator[bytes], coding: str, notes: list[str], state: PayloadState, want: int | None
) -> Iterator[bytes]:
    """Undo one content coding; keep the raw bytes when the declaration turns out to be false."""
    blocks = iter(blocks)
    first = _first_part(blocks, _PROBE_BYTES)
    if not first:
        return
    decoder, why = _make_decoder(coding, first)
    if decoder is None:
        notes.append(why or f"content-encoding {coding}: kept raw bytes")
        yield first
        yield from blocks
        return

    produced = 0

    def cap() -> int:
        if want is None:
            return READ_BLOCK
        return max(1, min(READ_BLOCK, want - produced))

    # Phase 1: decode the first raw bytes privately. An error here means the header lies.
    held: list[bytes] = []
    held_n = 0
    gen = decoder.feed(first, cap)
    gen_done = False
    try:
        while True:
            try:
                out = next(gen)
            except StopIteration:
                gen_done = True
                break
            if want is not None and produced + len(out) > want:
                out = out[: want - produced]  # brotli works in ~32 KiB buffers: never hand on more
            held.append(out)
            held_n += len(out)
            produced += len(out)
            if (want is not None and produced >= want) or held_n >= _PROBE_OUTPUT:
                break
    except Exception:
        notes.append(f"content-encoding {coding} declared but payload not {coding}: kept raw bytes")
        yield first
        yield from blocks
        return

    state.decoding = True
    yield from held
    if want is not None and produced >= want:
        state.stopped = True
        return

    # Phase 2: stream the rest, bounded.
    def rest() -> Iterator[bytes]:
        if not gen_done:
            yield from gen
        for block in blocks:
            yield from decoder.feed(block, cap)
        yield from decoder.finish(cap)

    try:
        for out in rest():
            produced += len(out)
            if want is not None and produced > want:
                out = out[: len(out) - (produced - want)]
                produced = want
            yield out
            if want is not None and produced >= want:
                state.stopped = True
                return
    except StreamError:
        raise
    except Exception as exc:
        notes.append(
            f"content-encoding {coding}: decoding failed after {produced} bytes ({describe_exc(exc)})"
        )
        return
    if not decoder.finished:
        notes.append(f"content-encoding {coding}: compressed data ends early after {produced} decoded bytes")
    if decoder.trailing:
        notes.append(f"content-encoding {coding}: {decoder.trailing} bytes after the compressed data ignored")
