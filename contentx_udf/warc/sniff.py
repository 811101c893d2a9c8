"""What a payload is: media type guesses from its first bytes (magic numbers, HTML markers, control bytes).

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
"""

from __future__ import annotations

HTML_MIME_TYPES = ("text/html", "application/xhtml+xml")
GENERIC_MIME_TYPES = ("application/octet-stream",)

SNIFF_BYTES = 1024  # how much decoded payload the sniffer looks at
GZIP_MAGIC = b"\x1f\x8b"

_MAGIC = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (GZIP_MAGIC, "application/gzip"),
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


def sniff_type(head: bytes) -> str | None:
    """Cheap type guess from the first bytes of a decoded payload (or None)."""
    if not head:
        return None
    magic = _magic(head)
    if magic:
        return magic
    text = _as_text_bytes(head)
    if _control_ratio(text[:SNIFF_BYTES]) > 0.10:
        return None
    t = text.lstrip()[:SNIFF_BYTES].lower()
    if not t:
        return "text/plain"
    if t.startswith(b"<"):
        if any(marker in t for marker in _HTML_MARKERS):
            return "text/html"
        return "application/xml" if t.startswith((b"<?xml", b"<rss", b"<feed", b"<svg")) else "text/plain"
    if t[:1] in (b"{", b"["):
        return "application/json"
    return "text/plain"


def binary_reason(head: bytes) -> str | None:
    """Why the payload is clearly not text (for content declared as HTML), or None."""
    magic = _magic(head)
    if magic:
        return f"sniffed {magic}"
    text = _as_text_bytes(head)
    ratio = _control_ratio(text[:SNIFF_BYTES])
    if ratio > 0.10:
        return (
            f"sniffed binary: {ratio:.0%} control/NUL bytes in the first {min(len(text), SNIFF_BYTES)} bytes"
        )
    return None
