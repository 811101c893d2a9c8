"""Parsing WARC and HTTP header fields (status, media type, charset, host, date) and record checks.

Common Crawl metadata
---------------------
A ``metadata`` record that immediately follows a content record and names it in
``WARC-Concurrent-To`` or ``WARC-Refers-To`` fills that row's ``content_charset`` (from
``charset-detected``, lower-cased) and ``content_languages`` (codes from ``languages-cld2`` JSON,
comma-joined). That is why each content row is held back until the next record has been read.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any
from urllib.parse import urlsplit

from .row import WarcRow

_STATUS_TOKEN = re.compile(r"[0-9]{3}")
_STATUS_PREFIX = re.compile(r"\s*([0-9]{3})(?![0-9])")
_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.IGNORECASE)


def status_code(statusline: str | None) -> int | None:
    """First 3-digit token of the status line ('HTTP/1.1 200 OK' -> 200, '200' -> 200)."""
    if not statusline:
        return None
    for token in statusline.split():
        if _STATUS_TOKEN.fullmatch(token):
            return int(token)
    m = _STATUS_PREFIX.match(statusline)
    return int(m.group(1)) if m else None


def mime_only(value: str | None) -> str | None:
    """'Text/HTML; charset=UTF-8' -> 'text/html'; empty -> None."""
    if not value:
        return None
    mime = value.split(";", 1)[0].split(",", 1)[0].strip().strip("\"'").lower()
    return mime or None


def charset_param(value: str | None) -> str | None:
    if not value:
        return None
    m = _CHARSET.search(value)
    return m.group(1).lower() if m else None


def host_name(url: str | None) -> str | None:
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


def parse_warc_date(value: str | None) -> _dt.datetime | None:
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


def content_length(rec: Any) -> int | None:
    value = rec.rec_headers.get_header("Content-Length")
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def record_problem(rec: Any) -> str | None:
    """Why this parsed record cannot be trusted as a WARC record, or None."""
    if rec.format != "warc":
        first = " ".join(str(v) for _, v in rec.rec_headers.headers)[:120]
        return f"looks like an ARC record or plain text, not WARC (first line {first!r})"
    protocol = (rec.rec_headers.protocol or "").strip()
    if not protocol.upper().startswith("WARC/"):
        return f"record does not start with a WARC/x.y line (got {protocol[:80]!r})"
    if not rec.rec_type:
        return "record without WARC-Type"
    if content_length(rec) is None:
        value = rec.rec_headers.get_header("Content-Length")
        return f"{rec.rec_type} record without a valid Content-Length ({value!r})"
    return None


def wet_wat_kind(rec: Any) -> str | None:
    if rec.rec_type == "conversion":
        return (
            "this is a WET file (extracted text, 'conversion' records), not a WARC with HTML responses: "
            "pass the .warc.gz"
        )
    if (
        rec.rec_type == "metadata"
        and mime_only(rec.rec_headers.get_header("Content-Type")) == "application/json"
    ):
        return "this is a WAT file (JSON metadata records), not a WARC with HTML responses: pass the .warc.gz"
    return None


def refers_to(rec: Any, record_id: str | None) -> bool:
    if not record_id:
        return False
    wanted = record_id.strip()
    return any(
        n.lower() in ("warc-concurrent-to", "warc-refers-to") and v.strip() == wanted
        for n, v in rec.rec_headers.headers
    )


def parse_cc_metadata(data: bytes) -> tuple[str | None, str | None, list[str]]:
    """``(content_charset, content_languages, notes)`` of a Common Crawl ``metadata`` record body."""
    charset = languages = None
    notes: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
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
                    str(x["code"]) for x in obj.get("languages", []) if isinstance(x, dict) and x.get("code")
                ]
                languages = ",".join(codes) or None
            except (ValueError, AttributeError, TypeError) as exc:
                notes.append(f"unparseable languages-cld2 in metadata record: {exc}")
    return charset, languages, notes


def apply_metadata(row: WarcRow, meta: tuple[str | None, str | None, list[str]]) -> None:
    charset, languages, notes = meta
    if charset:
        row.content_charset = charset
    if languages:
        row.content_languages = languages
    row.notes.extend(notes)
