"""Streaming WARC reader: one :class:`WarcRow` per content record, plus file-level problem rows.

This is the pure-Python reading layer of contentx (no Spark in here). It turns one WARC file into
a stream of flat rows that the Spark job writes to Parquet and hands to the HTML extractors.

Entry points
------------
``iter_warc_rows(location, warc_filename=None, *, max_html_bytes=1_048_576)``
    ``open_input`` + ``WarcReader``. ``location`` is a local path, ``file://`` URL, ``http(s)://`` URL
    (streamed with urllib) or ``s3://`` / ``s3a://`` URL (needs boto3, the optional extra
    ``contentx[s3]``). It is a generator: opening errors (missing file -> ``FileNotFoundError``,
    HTTP 404 -> ``FileNotFoundError``, missing boto3 -> ``MissingDependencyError``) surface on the
    first ``next()``. It never raises for bad file *content*: damage becomes rows.
``WarcReader(stream, warc_filename, *, max_html_bytes=1_048_576)``
    Iterate it once. After (or during) iteration ``reader.counts`` holds the number of records seen
    per WARC-Type (all types, request/metadata/warcinfo included) and ``reader.file_error`` is set
    when the file is not a WARC, is a WET/WAT, or is damaged.

Memory: the reader streams records with warcio's ``ArchiveIterator`` and reads bodies in 64 KiB
blocks. Per record it holds at most ``max_html_bytes + 1`` decoded bytes (plus a few 64 KiB
buffers); non-HTML records keep only their first 1 KiB (for sniffing). One content row is buffered
until the next record has been seen (see "metadata" below), so peak memory is about two payloads.
``max_html_bytes=0`` or ``None`` disables the cut (then an HTML record's whole decoded body is held).

Rows
----
* One row per ``response`` / ``revisit`` / ``resource`` record (``CONTENT_TYPES``), in file order.
  ``request``, ``warcinfo``, ``metadata`` (and any other type) give no row; they are only counted.
* ``status == "ok"`` means: HTML, go on and extract; only these rows carry ``payload`` and have
  ``is_html=True``. ``"skipped"`` rows (non-HTML, revisit, resource, empty, binary declared as HTML)
  and ``"error"`` rows carry a readable ``error``. ``notes`` lists non-fatal facts.
* HTTP status is not used to decide: a 404 page with an HTML body is ``ok``. Filter on
  ``fetch_status`` downstream if wanted.
* A *file-level row* has ``warc_type=None``; it reports a problem of the file rather than of one
  content record (``"not a WARC file: ..."``, ``"empty file: no WARC records"``,
  ``"this is a WET file ..."``, ``"corrupt WARC at offset N: ..."``, or a truncated non-content
  record). Its ``warc_record_offset`` is where the problem was found (``None`` for an empty file).

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

is_html
-------
HTTP Content-Type (first one) ``text/html`` or ``application/xhtml+xml`` -> HTML, unless the
decoded payload sniffs as clearly binary (PNG/JPEG/GIF/PDF/ZIP/gzip magic, or more than 10 %
control/NUL bytes in the first 1 KiB): then ``skipped`` with
``"binary payload declared text/html (sniffed image/png)"``. Missing, empty or
``application/octet-stream`` Content-Type -> HTML only when the payload sniffs as HTML. Anything
else -> ``skipped``, ``"not HTML: <mime>"``. A whitespace-only HTML body -> ``skipped``,
``"empty payload"``. Records without HTTP headers (``dns:`` responses, resources, ...) use the
WARC ``Content-Type`` as ``content_mime_type``.

Common Crawl metadata
---------------------
A ``metadata`` record that immediately follows a content record and names it in
``WARC-Concurrent-To`` or ``WARC-Refers-To`` fills that row's ``content_charset`` (from
``charset-detected``, lower-cased) and ``content_languages`` (codes from ``languages-cld2`` JSON,
comma-joined). That is why each content row is held back until the next record has been read.

Damage
------
* A record whose data ends before its declared Content-Length (a cut file or a corrupt gzip
  member: warcio returns fewer bytes and raises nothing) is detected through
  ``record.raw_stream.limit``. Its row gets ``status="error"``,
  ``error="truncated: record ends N bytes early (file cut or corrupt gzip): ..."``, ``file_error``
  is set and iteration stops: nothing after it can be trusted. Rows before it are yielded normally.
* Any other failure of warcio mid-file (ArchiveLoadFailed, invalid record header, missing
  Content-Length, unreadable bytes after the last record, a gzip member that stops before its
  trailer, a whole-file gzip) yields one file-level row ``"corrupt WARC at offset N: <reason>"``
  and stops.
* A failure on the very first record yields ``"not a WARC file: ..."``. A 0-byte file (or one
  holding only whitespace / an empty gzip stream) yields ``status="skipped"``,
  ``"empty file: no WARC records"`` and leaves ``file_error`` unset.
* WET (``conversion`` records) and WAT (``metadata`` records with ``application/json`` bodies)
  files yield one file-level error row and stop; no rows are invented for their records.
* A bug while building one row turns into an error row for that record; iteration goes on.
* I/O errors of the underlying stream (disk, network: ``OSError``, ``http.client`` errors) are
  *not* content problems: they propagate so that the caller (a Spark task) can retry.

Offsets
-------
``warc_record_offset`` / ``warc_record_length`` come from ``ArchiveIterator.get_record_offset()`` /
``get_record_length()``: for ``.gz`` files the gzip member, as in the Common Crawl index, so
``(warc_filename, offset, length)`` joins back to the record. Offsets are absolute when the stream
reports its position (``tell()``), else relative to where reading started.
"""

from __future__ import annotations

import collections
import datetime as _dt
import errno
import json
import logging
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from warcio.archiveiterator import ArchiveIterator

__all__ = [
    "CONTENT_TYPES",
    "DEFAULT_MAX_HTML_BYTES",
    "MissingDependencyError",
    "ROW_FIELDS",
    "WarcReader",
    "WarcRow",
    "iter_warc_rows",
    "open_input",
]

log = logging.getLogger(__name__)

CONTENT_TYPES = ("response", "revisit", "resource")
DEFAULT_MAX_HTML_BYTES = 1_048_576

HTML_MIME_TYPES = ("text/html", "application/xhtml+xml")
GENERIC_MIME_TYPES = ("application/octet-stream",)

_BLOCK = 65_536  # read / decode granularity
_SNIFF_BYTES = 1024  # how much decoded payload the sniffer looks at
_PROBE_BYTES = 4096  # raw bytes gathered before deciding whether a declared encoding is honest
_PROBE_OUTPUT = 262_144  # decoded bytes held back while that decision is pending
_METADATA_MAX = 65_536  # how much of a metadata record body is parsed
_EMPTY_CHECK_MAX = 65_536  # files up to this size are checked for "only whitespace"
_GZIP_MAGIC = b"\x1f\x8b"


class MissingDependencyError(ImportError, ValueError):
    """An optional dependency is missing (catchable as ImportError or ValueError)."""


@dataclass
class WarcRow:
    """One output row: a content record, or a file-level problem (``warc_type is None``)."""

    url: str | None = None
    url_host_name: str | None = None
    fetch_time: _dt.datetime | None = None
    fetch_status: int | None = None
    content_mime_type: str | None = None
    content_mime_detected: str | None = None
    content_charset: str | None = None
    content_languages: str | None = None
    content_digest: str | None = None
    warc_filename: str = ""
    warc_record_offset: int | None = None
    warc_record_length: int | None = None
    warc_record_id: str | None = None
    warc_type: str | None = None
    http_content_type: str | None = None
    is_html: bool = False
    payload: bytes | None = None
    payload_length: int | None = None
    status: str = "skipped"
    error: str | None = None
    notes: list[str] = field(default_factory=list)


ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(WarcRow))


# --------------------------------------------------------------------------------------------------
# Opening inputs
# --------------------------------------------------------------------------------------------------


def open_input(location: str) -> BinaryIO:
    """Open a WARC for streaming reading.

    Local path or ``file://`` URL -> ``open(path, "rb")`` (missing file -> ``FileNotFoundError``).
    ``http(s)://`` -> urllib response object, read as a stream (never the whole file in memory;
    HTTP 404 -> ``FileNotFoundError``, other HTTP errors -> ``OSError``).
    ``s3://`` / ``s3a://`` / ``s3n://`` -> boto3 ``get_object`` body (streamed); without boto3 a
    :class:`MissingDependencyError` (an ImportError *and* ValueError) says ``pip install contentx[s3]``.
    """
    if not isinstance(location, str) or not location:
        raise ValueError(f"WARC location must be a non-empty string, got {location!r}")
    parts = urlsplit(location)
    scheme = parts.scheme.lower() if len(parts.scheme) > 1 else ""  # "C:\\x" is a path, not a URL
    if scheme in ("http", "https"):
        return _open_http(location)
    if scheme in ("s3", "s3a", "s3n"):
        return _open_s3(location, parts.netloc, parts.path)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError(f"file:// URL with a remote host is not supported: {location}")
        path = url2pathname(unquote(parts.path))
    elif scheme:
        raise ValueError(
            f"unsupported WARC location scheme {scheme!r} in {location!r} "
            "(use a local path, file://, http(s):// or s3://)"
        )
    else:
        path = location
    try:
        return open(path, "rb")  # the caller closes it (iter_warc_rows does)
    except FileNotFoundError as exc:
        raise FileNotFoundError(errno.ENOENT, f"WARC file not found: {path}", path) from exc


def _open_http(url: str) -> BinaryIO:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": "contentx-warc-reader/0.1"})
    try:
        return urllib.request.urlopen(req, timeout=120)  # streamed: read() pulls from the socket
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            raise FileNotFoundError(errno.ENOENT, f"WARC not found: HTTP {exc.code} for {url}", url) from exc
        raise OSError(f"cannot open {url}: HTTP {exc.code} {exc.reason}") from exc


def _open_s3(location: str, bucket: str, path: str) -> BinaryIO:
    try:
        import boto3
    except ImportError as exc:
        raise MissingDependencyError(
            f"reading {location} needs boto3, which is not installed: pip install contentx[s3]"
        ) from exc
    key = path.lstrip("/")
    if not bucket or not key:
        raise ValueError(f"S3 location must look like s3://bucket/key, got {location!r}")
    client = boto3.client("s3")
    try:
        obj = client.get_object(Bucket=bucket, Key=key)
    except Exception as exc:  # botocore.exceptions.ClientError, without importing botocore here
        code = ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")
        if code in ("NoSuchKey", "404", "NoSuchBucket"):
            raise FileNotFoundError(errno.ENOENT, f"WARC not found: {location} ({code})", location) from exc
        raise
    return obj["Body"]


def iter_warc_rows(
    location: str, warc_filename: str | None = None, *, max_html_bytes: int | None = DEFAULT_MAX_HTML_BYTES
) -> Iterator[WarcRow]:
    """Open ``location`` and yield its rows; ``warc_filename`` defaults to ``location``.

    Never raises for bad file content (damage becomes rows). Opening errors and I/O errors of the
    underlying stream do propagate (on the first ``next()``, since this is a generator).
    """
    stream = open_input(location)
    try:
        yield from WarcReader(
            stream, location if warc_filename is None else warc_filename, max_html_bytes=max_html_bytes
        )
    finally:
        stream.close()


# --------------------------------------------------------------------------------------------------
# The reader
# --------------------------------------------------------------------------------------------------


class _StreamError(Exception):
    """Reading the WARC data itself failed (not our code, not an I/O error)."""


class _CountingReader:
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
            done += len(self.read(_BLOCK))


def _reraise_io_error(src: _CountingReader, exc: BaseException) -> None:
    """Re-raise an I/O error of the underlying stream (not a content problem: the caller may retry)."""
    if src.io_error is not None:
        if src.io_error is exc:
            raise exc
        raise src.io_error from exc


class WarcReader:
    """Iterate the rows of one WARC stream (single pass). See the module docstring."""

    def __init__(
        self, stream: BinaryIO, warc_filename: str, *, max_html_bytes: int | None = DEFAULT_MAX_HTML_BYTES
    ) -> None:
        if max_html_bytes is not None and max_html_bytes < 0:
            raise ValueError(f"max_html_bytes must be >= 0 or None, got {max_html_bytes}")
        self.stream = stream
        self.warc_filename = warc_filename
        self.max_html_bytes: int | None = max_html_bytes or None  # 0 -> no limit
        self.counts: collections.Counter[str] = collections.Counter()
        self.file_error: str | None = None
        self._started = False

    # -- main loop ---------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[WarcRow]:
        if self._started:
            raise RuntimeError("a WarcReader can be iterated only once (the stream is consumed)")
        self._started = True
        src = _CountingReader(self.stream)
        archive = ArchiveIterator(src)
        records = iter(archive)
        pending: WarcRow | None = None  # content row waiting for a possible metadata record
        n_records = 0
        content_seen = False

        while True:
            rec_offset = archive.offset
            try:
                rec = next(records)
            except StopIteration:
                break
            except Exception as exc:
                _reraise_io_error(src, exc)
                if pending is not None:
                    yield pending
                    pending = None
                if n_records == 0:
                    yield self._not_a_warc_row(src, _describe_exc(exc))
                else:
                    yield self._file_row(
                        f"corrupt WARC at offset {rec_offset}: {_describe_exc(exc)}", rec_offset
                    )
                return
            n_records += 1

            # -- is this a sane WARC record at all? (checked before reading anything of it)
            problem = _record_problem(rec)
            if problem is not None:
                if pending is not None:
                    yield pending
                    pending = None
                if n_records == 1:
                    if _whitespace_only(src, rec):
                        yield self._empty_row()
                    else:
                        yield self._not_a_warc_row(src, problem)
                else:
                    yield self._file_row(f"corrupt WARC at offset {rec_offset}: {problem}", rec_offset)
                return

            rec_type = rec.rec_type
            self.counts[rec_type] += 1

            # -- WET / WAT files are not what the job wants
            if not content_seen:
                kind = _wet_wat_kind(rec)
                if kind is not None:
                    if pending is not None:
                        yield pending
                        pending = None
                    yield self._file_row(kind, rec_offset)
                    return

            row: WarcRow | None = None
            meta: tuple[str | None, str | None, list[str]] | None = None
            try:
                if rec_type in CONTENT_TYPES:
                    content_seen = True
                    try:
                        row = self._content_row(rec)
                    except _StreamError:
                        raise
                    except Exception as exc:  # a bug on one record must not kill the file
                        _reraise_io_error(src, exc)
                        log.exception("contentx.warc: internal error on record at offset %s", rec_offset)
                        row = self._error_row(
                            rec, f"internal error while reading record: {_describe_exc(exc)}"
                        )
                elif (
                    rec_type == "metadata" and pending is not None and _refers_to(rec, pending.warc_record_id)
                ):
                    try:
                        meta = self._read_metadata(rec)
                    except _StreamError:
                        raise
                    except Exception as exc:
                        _reraise_io_error(src, exc)
                        pending.notes.append(f"unreadable metadata record: {_describe_exc(exc)}")
                declared = _content_length(rec)
                self._drain(rec.raw_stream)
                remaining = getattr(rec.raw_stream, "limit", 0) or 0
                offset, length = archive.get_record_offset(), archive.get_record_length()
            except Exception as exc:
                _reraise_io_error(src, exc)
                if pending is not None:
                    yield pending
                    pending = None
                cause = exc.__cause__ if isinstance(exc, _StreamError) and exc.__cause__ else exc
                yield self._file_row(
                    f"corrupt WARC at offset {rec_offset}: error reading {rec_type} record: "
                    f"{_describe_exc(cause)}",
                    rec_offset,
                    url=rec.rec_headers.get_header("WARC-Target-URI"),
                )
                return

            if row is not None:
                row.warc_record_offset = offset
                row.warc_record_length = length

            if remaining > 0:
                got = (declared or 0) - remaining
                msg = (
                    f"truncated: record ends {remaining} bytes early (file cut or corrupt gzip): "
                    f"{got} of {declared} declared bytes present"
                )
                self.file_error = f"{msg} in {rec_type} record at offset {offset}"
                if pending is not None:
                    yield pending
                    pending = None
                if row is None:
                    row = self._file_row(
                        f"{msg} ({rec_type} record)",
                        offset,
                        url=rec.rec_headers.get_header("WARC-Target-URI"),
                    )
                    row.warc_record_length = length
                    row.warc_record_id = rec.rec_headers.get_header("WARC-Record-ID")
                else:
                    row.status, row.error, row.is_html = "error", msg, False
                    row.payload = row.payload_length = None
                yield row
                return

            if _gzip_member_unfinished(archive, src):
                # all declared bytes arrived, but the gzip member stops before its end (file cut in
                # the member's last bytes, or a corrupt trailer): CRC unverified, nothing follows
                where = f"{rec_type} record at offset {offset}"
                if row is not None:
                    row.notes.append("gzip member of this record ends before its trailer: CRC not verified")
                if meta is not None and pending is not None:
                    _apply_metadata(pending, meta)
                for done in (pending, row):
                    if done is not None:
                        yield done
                pending = None
                yield self._file_row(
                    f"corrupt WARC at offset {offset + length}: the gzip member of the {where} ends before "
                    "its gzip trailer (file cut or corrupt gzip)",
                    offset + length,
                )
                return

            if pending is not None:
                if meta is not None:
                    _apply_metadata(pending, meta)
                yield pending
            pending = row  # held back until the next record shows whether metadata follows

        if pending is not None:
            yield pending
            pending = None

        # -- warcio stops silently on some damage (a gzip member cut inside its header, a record
        #    cut right after its WARC headers): bytes left over after the last record betray it.
        end = archive.offset
        src.drain()
        if n_records == 0:
            if src.pos - src.start == 0 or _whitespace_only(src, None):
                yield self._empty_row()
            else:
                yield self._not_a_warc_row(src, "no WARC record could be read")
            return
        leftover = src.pos - end
        if leftover > 0:
            yield self._file_row(
                f"corrupt WARC at offset {end}: {leftover} bytes after the last complete record could not "
                "be read as a WARC record (file cut inside a record or gzip header, or trailing garbage)",
                end,
            )

    # -- row builders ------------------------------------------------------------------------------

    def _file_row(self, error: str, offset: int | None, *, url: str | None = None) -> WarcRow:
        self.file_error = self.file_error or error
        return WarcRow(
            url=url,
            url_host_name=_host_name(url),
            warc_filename=self.warc_filename,
            warc_record_offset=offset,
            status="error",
            error=error,
        )

    def _not_a_warc_row(self, src: _CountingReader, reason: str) -> WarcRow:
        kind = "gzip-compressed, " if bytes(src.head[:2]) == _GZIP_MAGIC else ""
        return self._file_row(f"not a WARC file: {kind}{reason}", src.start)

    def _empty_row(self) -> WarcRow:
        return WarcRow(
            warc_filename=self.warc_filename, status="skipped", error="empty file: no WARC records"
        )

    def _error_row(self, rec: Any, error: str) -> WarcRow:
        """Row for a record whose processing failed; must not fail itself."""
        try:
            row = self._base_row(rec)
        except Exception:
            row = WarcRow(warc_filename=self.warc_filename, warc_type=rec.rec_type)
        row.status, row.error, row.is_html, row.payload = "error", error, False, None
        return row

    def _base_row(self, rec: Any) -> WarcRow:
        h = rec.rec_headers
        url = h.get_header("WARC-Target-URI")
        row = WarcRow(
            url=url,
            url_host_name=_host_name(url),
            warc_filename=self.warc_filename,
            warc_record_id=h.get_header("WARC-Record-ID"),
            warc_type=rec.rec_type,
        )
        date = h.get_header("WARC-Date")
        row.fetch_time = _parse_warc_date(date)
        if row.fetch_time is None:
            row.notes.append("missing WARC-Date" if date is None else f"invalid WARC-Date {date!r}")
        truncated = h.get_header("WARC-Truncated")
        if truncated is not None:
            row.notes.append(f"WARC-Truncated: {truncated}")
        digest = h.get_header("WARC-Payload-Digest")
        if digest:
            digest = digest.strip()
            row.content_digest = digest[5:] if digest.lower().startswith("sha1:") else digest
        return row

    def _content_row(self, rec: Any) -> WarcRow:
        row = self._base_row(rec)
        h = rec.rec_headers
        http = rec.http_headers if rec.http_headers else None
        wipt = _mime_only(h.get_header("WARC-Identified-Payload-Type"))

        if http is not None:
            protocol = (http.protocol or "").strip()
            row.fetch_status = _status_code(http.statusline)
            if row.fetch_status is None and not protocol.upper().startswith("HTTP/"):
                row.fetch_status = _status_code(protocol)
            if not protocol.upper().startswith("HTTP/"):
                row.notes.append(f"no HTTP status line (first line {protocol} {http.statusline!r})".strip())
            ctypes = [v for n, v in http.headers if n.strip().lower() == "content-type"]
            if ctypes:
                row.http_content_type = ctypes[0]
                distinct = {_mime_only(v) for v in ctypes}
                if len(distinct) > 1:
                    ignored = ", ".join(repr(v) for v in ctypes[1:])
                    row.notes.append(
                        f"conflicting Content-Type headers: using {ctypes[0]!r}, ignoring {ignored}"
                    )
            row.content_mime_type = _mime_only(row.http_content_type)
            row.content_charset = _charset_param(row.http_content_type)
        else:
            warc_ct = h.get_header("Content-Type")
            if warc_ct and _mime_only(warc_ct) not in ("application/http", None):
                row.content_mime_type = _mime_only(warc_ct)
                row.content_charset = _charset_param(warc_ct)

        if rec.rec_type == "revisit":
            row.content_mime_detected = wipt
            refs = [
                f"{name} {h.get_header(name)}"
                for name in ("WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Refers-To")
                if h.get_header(name)
            ]
            row.error = "revisit record: no payload" + (f" (refers to {'; '.join(refs)})" if refs else "")
            profile = h.get_header("WARC-Profile")
            if profile:
                row.notes.append(f"WARC-Profile: {profile}")
            return row

        if rec.rec_type == "resource":
            mime = _mime_only(h.get_header("Content-Type"))
            row.content_mime_type = mime
            head, total = _collect(_raw_blocks(rec.raw_stream), _SNIFF_BYTES, _State(), count_rest=True)
            row.payload_length = total
            row.content_mime_detected = wipt or _sniff(bytes(head))
            row.error = f"resource record: {mime or '(no Content-Type)'}"
            return row

        # response (or another future content type handled like one)
        mime = row.content_mime_type
        declared_html = mime in HTML_MIME_TYPES
        candidate = declared_html or mime is None or mime in GENERIC_MIME_TYPES
        want = (self.max_html_bytes + 1 if self.max_html_bytes else None) if candidate else _SNIFF_BYTES
        state = _State()
        if http is not None:
            body = _decoded_body(
                _raw_blocks(rec.raw_stream),
                http.get_header("transfer-encoding"),
                ", ".join(v for n, v in http.headers if n.strip().lower() == "content-encoding") or None,
                want,
                state,
                row.notes,
            )
        else:
            body = _raw_blocks(rec.raw_stream)
        data, total = _collect(body, want, state, count_rest=True)
        row.payload_length = total
        sniffed = _sniff(bytes(data[:_SNIFF_BYTES]))
        row.content_mime_detected = wipt or sniffed

        if http is None and not data and (mime is None or mime == "application/http"):
            row.error = "empty response record: no HTTP headers and no payload"
            return row
        if declared_html:
            binary = _binary_reason(bytes(data[:_SNIFF_BYTES]))
            if binary is not None:
                row.error = f"binary payload declared {mime} ({binary})"
                return row
            if not bytes(data).strip():
                row.error = "empty payload"
                return row
        elif candidate:
            if sniffed != "text/html":
                what = mime or "(no Content-Type)"
                row.error = f"not HTML: {what}" + (f" (sniffed {sniffed})" if sniffed else "")
                return row
            row.notes.append(f"{'no' if mime is None else mime} Content-Type, payload sniffed as HTML")
        else:
            row.error = f"not HTML: {mime}"
            return row

        row.status = "ok"
        row.is_html = True
        limit = self.max_html_bytes
        if limit is not None and len(data) > limit:
            row.payload = bytes(data[:limit])
            if total is not None:
                row.notes.append(f"payload cut at {limit} of {total} bytes (max_html_bytes)")
            else:
                row.notes.append(
                    f"payload cut at {limit} bytes (max_html_bytes); full decoded length unknown: "
                    "content decoding stopped at the limit"
                )
        else:
            row.payload = bytes(data)
        return row

    def _read_metadata(self, rec: Any) -> tuple[str | None, str | None, list[str]]:
        data, _ = _collect(_raw_blocks(rec.raw_stream), _METADATA_MAX, _State(), False)
        charset = languages = None
        notes: list[str] = []
        for line in bytes(data).decode("utf-8", "replace").splitlines():
            name, sep, value = line.partition(":")
            if not sep:
                continue
            name, value = name.strip().lower(), value.strip()
            if name == "charset-detected" and value:
                charset = value.lower()
            elif name == "languages-cld2" and value:
                try:
                    obj = json.loads(value)
                    codes = [
                        str(x["code"])
                        for x in obj.get("languages", [])
                        if isinstance(x, dict) and x.get("code")
                    ]
                    languages = ",".join(codes) or None
                except (ValueError, AttributeError, TypeError) as exc:
                    notes.append(f"unparseable languages-cld2 in metadata record: {exc}")
        return charset, languages, notes

    # -- stream helpers ----------------------------------------------------------------------------

    @staticmethod
    def _drain(stream: Any) -> None:
        for _ in _raw_blocks(stream):
            pass


# --------------------------------------------------------------------------------------------------
# Record-level checks
# --------------------------------------------------------------------------------------------------


def _content_length(rec: Any) -> int | None:
    value = rec.rec_headers.get_header("Content-Length")
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def _record_problem(rec: Any) -> str | None:
    """Why this parsed record cannot be trusted as a WARC record, or None."""
    if rec.format != "warc":
        first = " ".join(str(v) for _, v in rec.rec_headers.headers)[:120]
        return f"looks like an ARC record or plain text, not WARC (first line {first!r})"
    protocol = (rec.rec_headers.protocol or "").strip()
    if not protocol.upper().startswith("WARC/"):
        return f"record does not start with a WARC/x.y line (got {protocol[:80]!r})"
    if not rec.rec_type:
        return "record without WARC-Type"
    if _content_length(rec) is None:
        value = rec.rec_headers.get_header("Content-Length")
        return f"{rec.rec_type} record without a valid Content-Length ({value!r})"
    return None


def _wet_wat_kind(rec: Any) -> str | None:
    if rec.rec_type == "conversion":
        return (
            "this is a WET file (extracted text, 'conversion' records), not a WARC with HTML responses: "
            "pass the .warc.gz"
        )
    if (
        rec.rec_type == "metadata"
        and _mime_only(rec.rec_headers.get_header("Content-Type")) == "application/json"
    ):
        return "this is a WAT file (JSON metadata records), not a WARC with HTML responses: pass the .warc.gz"
    return None


def _refers_to(rec: Any, record_id: str | None) -> bool:
    if not record_id:
        return False
    wanted = record_id.strip()
    return any(
        n.lower() in ("warc-concurrent-to", "warc-refers-to") and v.strip() == wanted
        for n, v in rec.rec_headers.headers
    )


def _apply_metadata(row: WarcRow, meta: tuple[str | None, str | None, list[str]]) -> None:
    charset, languages, notes = meta
    if charset:
        row.content_charset = charset
    if languages:
        row.content_languages = languages
    row.notes.extend(notes)


def _gzip_member_unfinished(archive: ArchiveIterator, src: _CountingReader) -> bool:
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


def _whitespace_only(src: _CountingReader, rec: Any) -> bool:
    """True when the whole input (small, plain or gzip) holds nothing but whitespace."""
    if rec is not None:
        if rec.rec_headers.headers or (rec.rec_headers.protocol or "").strip():
            return False
    src.drain(_EMPTY_CHECK_MAX)
    if not src.eof or src.pos - src.start > _EMPTY_CHECK_MAX:
        return False
    data = bytes(src.head)
    if data[:2] == _GZIP_MAGIC:
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


def _describe_exc(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    if len(msg) > 300:
        msg = msg[:300] + "..."
    if "non-chunked gzip file detected" in msg:
        return (
            "the whole file is one gzip stream, not one gzip member per record (record offsets would "
            "be meaningless); recompress it with `warcio recompress`"
        )
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


# --------------------------------------------------------------------------------------------------
# Field parsing
# --------------------------------------------------------------------------------------------------

_STATUS_TOKEN = re.compile(r"[0-9]{3}")
_STATUS_PREFIX = re.compile(r"\s*([0-9]{3})(?![0-9])")
_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.IGNORECASE)


def _status_code(statusline: str | None) -> int | None:
    """First 3-digit token of the status line ('HTTP/1.1 200 OK' -> 200, '200' -> 200)."""
    if not statusline:
        return None
    for token in statusline.split():
        if _STATUS_TOKEN.fullmatch(token):
            return int(token)
    m = _STATUS_PREFIX.match(statusline)
    return int(m.group(1)) if m else None


def _mime_only(value: str | None) -> str | None:
    """'Text/HTML; charset=UTF-8' -> 'text/html'; empty -> None."""
    if not value:
        return None
    mime = value.split(";", 1)[0].split(",", 1)[0].strip().strip("\"'").lower()
    return mime or None


def _charset_param(value: str | None) -> str | None:
    if not value:
        return None
    m = _CHARSET.search(value)
    return m.group(1).lower() if m else None


def _host_name(url: str | None) -> str | None:
    if not url:
        return None
    url = url.strip()
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if not host and parts.scheme.lower() == "dns":
        host = parts.path.split("/", 1)[0]
    host = (host or "").strip().rstrip(".").lower()
    return host or None


_WARC_DATE_14 = re.compile(r"[0-9]{14}")


def _parse_warc_date(value: str | None) -> _dt.datetime | None:
    """WARC-Date -> tz-aware UTC datetime; None if missing or invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        if _WARC_DATE_14.fullmatch(value):  # ARC-style 20080430204825
            parsed = _dt.datetime.strptime(value, "%Y%m%d%H%M%S")
        else:
            parsed = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=_dt.UTC)
    return parsed.astimezone(_dt.UTC)


# --------------------------------------------------------------------------------------------------
# Sniffing
# --------------------------------------------------------------------------------------------------

_MAGIC = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (_GZIP_MAGIC, "application/gzip"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"PK\x07\x08", "application/zip"),
)
_HTML_MARKERS = (
    b"<!doctype html",
    b"<html",
    b"<head",
    b"<body",
    b"<title",
    b"<meta",
    b"<script",
    b"<div",
    b"<p>",
    b"<table",
    b"<a href",
    b"<br",
    b"<frameset",
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1b")
#: Control bytes that do not occur in text (C0 controls other than _TEXT_CONTROLS, and DEL).
_BINARY_CONTROLS = bytes(b for b in range(256) if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F)


def _magic(head: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    return None


def _as_text_bytes(head: bytes) -> bytes:
    """Strip a UTF-8 BOM; re-encode UTF-16 (with BOM) as UTF-8 so the byte tests work."""
    if head.startswith(b"\xef\xbb\xbf"):
        return head[3:]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head.decode("utf-16", "ignore").encode("utf-8", "ignore")
    return head


def _control_ratio(head: bytes) -> float:
    if not head:
        return 0.0
    bad = len(head) - len(head.translate(None, _BINARY_CONTROLS))
    return bad / len(head)


def _sniff(head: bytes) -> str | None:
    """Cheap type guess from the first bytes of a decoded payload (or None)."""
    if not head:
        return None
    magic = _magic(head)
    if magic:
        return magic
    text = _as_text_bytes(head)
    if _control_ratio(text[:_SNIFF_BYTES]) > 0.10:
        return None
    t = text.lstrip()[:_SNIFF_BYTES].lower()
    if not t:
        return "text/plain"
    if t.startswith(b"<"):
        if any(marker in t for marker in _HTML_MARKERS):
            return "text/html"
        return "application/xml" if t.startswith((b"<?xml", b"<rss", b"<feed", b"<svg")) else "text/plain"
    if t[:1] in (b"{", b"["):
        return "application/json"
    return "text/plain"


def _binary_reason(head: bytes) -> str | None:
    """Why the payload is clearly not text (for content declared as HTML), or None."""
    magic = _magic(head)
    if magic:
        return f"sniffed {magic}"
    text = _as_text_bytes(head)
    ratio = _control_ratio(text[:_SNIFF_BYTES])
    if ratio > 0.10:
        return (
            f"sniffed binary: {ratio:.0%} control/NUL bytes in the first {min(len(text), _SNIFF_BYTES)} bytes"
        )
    return None


# --------------------------------------------------------------------------------------------------
# Body pipeline: raw blocks -> de-chunk -> content-decode -> bounded collect
# --------------------------------------------------------------------------------------------------


class _State:
    """Shared by the pipeline stages of one body."""

    __slots__ = ("decoding", "stopped")

    def __init__(self) -> None:
        self.decoding = False  # a real decompressor is active: counting to the end is not free
        self.stopped = False  # the outermost decoder stopped at the output bound


def _raw_blocks(stream: Any) -> Iterator[bytes]:
    """Read a record body in blocks; failures become _StreamError (the reader re-raises I/O errors)."""
    while True:
        try:
            block = stream.read(_BLOCK)
        except Exception as exc:
            raise _StreamError(str(exc)) from exc
        if not block:
            return
        yield block


def _collect(
    blocks: Iterator[bytes], want: int | None, state: _State, count_rest: bool
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


def _decoded_body(
    blocks: Iterator[bytes],
    transfer_encoding: str | None,
    content_encoding: str | None,
    want: int | None,
    state: _State,
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
        if pos > _BLOCK:
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
                if self.wbits > 16 and pending[:2] == _GZIP_MAGIC:  # another gzip member
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
        if first[:2] != _GZIP_MAGIC:
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
    blocks: Iterator[bytes], coding: str, notes: list[str], state: _State, want: int | None
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
            return _BLOCK
        return max(1, min(_BLOCK, want - produced))

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
    except _StreamError:
        raise
    except Exception as exc:
        notes.append(
            f"content-encoding {coding}: decoding failed after {produced} bytes ({_describe_exc(exc)})"
        )
        return
    if not decoder.finished:
        notes.append(f"content-encoding {coding}: compressed data ends early after {produced} decoded bytes")
    if decoder.trailing:
        notes.append(f"content-encoding {coding}: {decoder.trailing} bytes after the compressed data ignored")
