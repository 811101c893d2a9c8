"""Streaming WARC reader: one :class:`~.row.WarcRow` per content record, plus file-level problem rows.

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
until the next record has been seen (metadata, :mod:`.headers`), so peak memory is about two payloads.
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

What a payload goes through is in :mod:`.payload`, the HTML decision in :mod:`.sniff`, the
Common Crawl ``metadata`` records in :mod:`.headers`.

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
  ``"empty file: no WARC records"``; ``file_error`` says the same (the job counts it among the
  file errors: an input that gave nothing).
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
import logging
from collections.abc import Iterator
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator

from .headers import (
    apply_metadata,
    charset_param,
    content_length,
    host_name,
    mime_only,
    parse_cc_metadata,
    parse_warc_date,
    record_problem,
    refers_to,
    status_code,
    wet_wat_kind,
)
from .inputs import open_input
from .payload import PayloadState, StreamError, collect_body, decoded_body, describe_exc, raw_blocks
from .row import CONTENT_TYPES, DEFAULT_MAX_HTML_BYTES, WarcRow
from .sniff import GENERIC_MIME_TYPES, GZIP_MAGIC, HTML_MIME_TYPES, SNIFF_BYTES, binary_reason, sniff_type
from .stream import CountingReader, gzip_member_unfinished, reraise_io_error, whitespace_only

log = logging.getLogger(__name__)

_METADATA_MAX = 65_536  # how much of a metadata record body is parsed


def unreadable_header(exc: BaseException) -> str:
    """Why the first record could not be read: warcio's own errors as they are, a failure inside
    its parser (a header block cut short: ``AttributeError`` and the like) in words."""
    if isinstance(exc, (AttributeError, TypeError, IndexError, KeyError)):
        return f"its first record's header cannot be parsed ({describe_exc(exc)})"
    return describe_exc(exc)


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


class WarcReader:
    """Iterate the rows of one WARC stream (single pass). See the module docstring."""

    def __init__(
        self,
        stream: BinaryIO,
        warc_filename: str,
        *,
        max_html_bytes: int | None = DEFAULT_MAX_HTML_BYTES,
        end: int | None = None,
        continued: bool = False,
    ) -> None:
        if max_html_bytes is not None and max_html_bytes < 0:
            raise ValueError(f"max_html_bytes must be >= 0 or None, got {max_html_bytes}")
        self.stream = stream
        self.warc_filename = warc_filename
        self.max_html_bytes: int | None = max_html_bytes or None  # 0 -> no limit
        #: a piece of a file (:mod:`.split`): records that start at or after ``end`` are the next
        #: piece's (only a metadata record of this piece's last capture is read there, and applied)
        self.end = end
        #: where the next piece's first record starts, when iteration stopped at ``end``
        self.next_offset: int | None = None
        #: the stream starts at a record inside the file (a piece after the first): the checks of a
        #: file's first records (not a WARC, empty, WET / WAT) are not made again
        self.continued = continued
        self.counts: collections.Counter[str] = collections.Counter()
        self.file_error: str | None = None
        self._started = False

    # -- main loop ---------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[WarcRow]:
        if self._started:
            raise RuntimeError("a WarcReader can be iterated only once (the stream is consumed)")
        self._started = True
        src = CountingReader(self.stream)
        archive = ArchiveIterator(src)
        records = iter(archive)
        pending: WarcRow | None = None  # content row waiting for a possible metadata record
        n_records = 1 if self.continued else 0  # (only a file's first record says "not a WARC")
        content_seen = self.continued

        while True:
            rec_offset = archive.offset
            if self.end is not None and rec_offset >= self.end:
                if self._beyond_end(src, archive, records, pending):
                    self.next_offset = rec_offset
                if pending is not None:
                    yield pending
                return
            try:
                rec = next(records)
            except StopIteration:
                break
            except Exception as exc:
                reraise_io_error(src, exc)
                if pending is not None:
                    yield pending
                    pending = None
                if n_records == 0:
                    yield self._not_a_warc_row(src, unreadable_header(exc))
                else:
                    yield self._file_row(
                        f"corrupt WARC at offset {rec_offset}: {describe_exc(exc)}", rec_offset
                    )
                return
            n_records += 1

            # -- is this a sane WARC record at all? (checked before reading anything of it)
            problem = record_problem(rec)
            if problem is not None:
                if pending is not None:
                    yield pending
                    pending = None
                if n_records == 1:
                    if whitespace_only(src, rec):
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
                kind = wet_wat_kind(rec)
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
                    except StreamError:
                        raise
                    except Exception as exc:  # a bug on one record must not kill the file
                        reraise_io_error(src, exc)
                        log.exception("contentx.warc: internal error on record at offset %s", rec_offset)
                        row = self._error_row(
                            rec, f"internal error while reading record: {describe_exc(exc)}"
                        )
                elif (
                    rec_type == "metadata" and pending is not None and refers_to(rec, pending.warc_record_id)
                ):
                    meta = self._pending_metadata(src, rec, pending)
                declared = content_length(rec)
                self._drain(rec.raw_stream)
                remaining = getattr(rec.raw_stream, "limit", 0) or 0
                offset, length = archive.get_record_offset(), archive.get_record_length()
            except Exception as exc:
                reraise_io_error(src, exc)
                if pending is not None:
                    yield pending
                    pending = None
                cause = exc.__cause__ if isinstance(exc, StreamError) and exc.__cause__ else exc
                yield self._file_row(
                    f"corrupt WARC at offset {rec_offset}: error reading {rec_type} record: "
                    f"{describe_exc(cause)}",
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

            if gzip_member_unfinished(archive, src):
                # all declared bytes arrived, but the gzip member stops before its end (file cut in
                # the member's last bytes, or a corrupt trailer): CRC unverified, nothing follows
                where = f"{rec_type} record at offset {offset}"
                if row is not None:
                    row.notes.append("gzip member of this record ends before its trailer: CRC not verified")
                if meta is not None and pending is not None:
                    apply_metadata(pending, meta)
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
                    apply_metadata(pending, meta)
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
            if src.pos - src.start == 0 or whitespace_only(src, None):
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

    def _beyond_end(
        self, src: CountingReader, archive: ArchiveIterator, records: Iterator[Any], pending: WarcRow | None
    ) -> bool:
        """At the end of a piece: whether anything follows (False: the file ends here).  When it is
        ``pending``'s metadata record (Common Crawl writes request, response, metadata), it is
        applied as reading the whole file would.  The record is the next piece's: not counted
        here, and its damage is that piece's to report (bytes that warcio stops at silently count
        as something: the next piece then cannot start there, and the job reads the file whole)."""
        try:
            rec = next(records)
        except StopIteration:
            last = archive.offset
            src.drain()
            return src.pos > last
        except Exception as exc:
            reraise_io_error(src, exc)
            return True
        try:
            if pending is None or rec.rec_type != "metadata" or record_problem(rec) is not None:
                return True
            if not refers_to(rec, pending.warc_record_id):
                return True
            meta = self._pending_metadata(src, rec, pending)
            self._drain(rec.raw_stream)
            if meta is not None and not (getattr(rec.raw_stream, "limit", 0) or 0):  # (not a cut one's)
                apply_metadata(pending, meta)
        except Exception as exc:
            reraise_io_error(src, exc)
        return True

    # -- row builders ------------------------------------------------------------------------------

    def _file_row(self, error: str, offset: int | None, *, url: str | None = None) -> WarcRow:
        self.file_error = self.file_error or error
        return WarcRow(
            url=url,
            url_host_name=host_name(url),
            warc_filename=self.warc_filename,
            warc_record_offset=offset,
            status="error",
            error=error,
        )

    def _not_a_warc_row(self, src: CountingReader, reason: str) -> WarcRow:
        kind = "gzip-compressed, " if bytes(src.head[:2]) == GZIP_MAGIC else ""
        return self._file_row(f"not a WARC file: {kind}{reason}", src.start)

    def _empty_row(self) -> WarcRow:
        self.file_error = self.file_error or "empty file: no WARC records"
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
            url_host_name=host_name(url),
            warc_filename=self.warc_filename,
            warc_record_id=h.get_header("WARC-Record-ID"),
            warc_type=rec.rec_type,
        )
        date = h.get_header("WARC-Date")
        row.fetch_time = parse_warc_date(date)
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
        wipt = mime_only(h.get_header("WARC-Identified-Payload-Type"))

        if http is not None:
            protocol = (http.protocol or "").strip()
            row.fetch_status = status_code(http.statusline)
            if row.fetch_status is None and not protocol.upper().startswith("HTTP/"):
                row.fetch_status = status_code(protocol)
            if not protocol.upper().startswith("HTTP/"):
                row.notes.append(f"no HTTP status line (first line {protocol} {http.statusline!r})".strip())
            ctypes = [v for n, v in http.headers if n.strip().lower() == "content-type"]
            if ctypes:
                row.http_content_type = ctypes[0]
                distinct = {mime_only(v) for v in ctypes}
                if len(distinct) > 1:
                    ignored = ", ".join(repr(v) for v in ctypes[1:])
                    row.notes.append(
                        f"conflicting Content-Type headers: using {ctypes[0]!r}, ignoring {ignored}"
                    )
            row.content_mime_type = mime_only(row.http_content_type)
            row.content_charset = charset_param(row.http_content_type)
        else:
            warc_ct = h.get_header("Content-Type")
            if warc_ct and mime_only(warc_ct) not in ("application/http", None):
                row.content_mime_type = mime_only(warc_ct)
                row.content_charset = charset_param(warc_ct)

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
            mime = mime_only(h.get_header("Content-Type"))
            row.content_mime_type = mime
            head, total = collect_body(
                raw_blocks(rec.raw_stream), SNIFF_BYTES, PayloadState(), count_rest=True
            )
            row.payload_length = total
            row.content_mime_detected = wipt or sniff_type(bytes(head))
            row.error = f"resource record: {mime or '(no Content-Type)'}"
            return row

        # response (or another future content type handled like one)
        mime = row.content_mime_type
        declared_html = mime in HTML_MIME_TYPES
        candidate = declared_html or mime is None or mime in GENERIC_MIME_TYPES
        want = (self.max_html_bytes + 1 if self.max_html_bytes else None) if candidate else SNIFF_BYTES
        state = PayloadState()
        if http is not None:
            body = decoded_body(
                raw_blocks(rec.raw_stream),
                http.get_header("transfer-encoding"),
                ", ".join(v for n, v in http.headers if n.strip().lower() == "content-encoding") or None,
                want,
                state,
                row.notes,
            )
        else:
            body = raw_blocks(rec.raw_stream)
        data, total = collect_body(body, want, state, count_rest=True)
        row.payload_length = total
        sniffed = sniff_type(bytes(data[:SNIFF_BYTES]))
        row.content_mime_detected = wipt or sniffed

        if http is None and not data and (mime is None or mime == "application/http"):
            row.error = "empty response record: no HTTP headers and no payload"
            return row
        if declared_html:
            binary = binary_reason(bytes(data[:SNIFF_BYTES]))
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

    def _pending_metadata(
        self, src: CountingReader, rec: Any, pending: WarcRow
    ) -> tuple[str | None, str | None, list[str]] | None:
        """The metadata record ``rec`` of ``pending``, read; None (and a note on ``pending``) when it
        cannot be read.  Stream damage and I/O errors propagate."""
        try:
            return self._read_metadata(rec)
        except StreamError:
            raise
        except Exception as exc:
            reraise_io_error(src, exc)
            pending.notes.append(f"unreadable metadata record: {describe_exc(exc)}")
            return None

    def _read_metadata(self, rec: Any) -> tuple[str | None, str | None, list[str]]:
        data, _ = collect_body(raw_blocks(rec.raw_stream), _METADATA_MAX, PayloadState(), False)
        return parse_cc_metadata(bytes(data))

    # -- stream helpers ----------------------------------------------------------------------------

    @staticmethod
    def _drain(stream: Any) -> None:
        for _ in raw_blocks(stream):
            pass
