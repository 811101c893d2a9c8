"""One row of the WARC reader (:class:`WarcRow`): a content record, or a problem of the file."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, fields

CONTENT_TYPES = ("response", "revisit", "resource")
DEFAULT_MAX_HTML_BYTES = 1_048_576


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
