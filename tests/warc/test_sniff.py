"""A record is HTML (status ok, payload kept) only when its Content-Type says HTML and its bytes do
not sniff as binary, or when its Content-Type is missing, empty or generic and its bytes sniff as
HTML; every other record is skipped with an error naming the declared and, where known, the sniffed
type. contentx_udf.warc.sniff, no Spark.
"""

from __future__ import annotations

import gzip
import random

from contentx_udf.warc.sniff import binary_reason, sniff_type

from .builders import HTML, build_warc, read_bytes, response

# ------------------------------------------------------------------------------------------------
# Generated WARCs: is_html decisions
# ------------------------------------------------------------------------------------------------


def test_is_html_decisions():
    png = b"\x89PNG\r\n\x1a\n" + bytes(random.Random(1).randrange(256) for _ in range(2000))
    noisy = bytes(random.Random(2).randrange(32) for _ in range(2000))  # control bytes, no magic
    cases = [
        ("declared-html", HTML, [("Content-Type", "text/html; charset=UTF-8")], "ok", None),
        ("xhtml", HTML, [("Content-Type", "application/xhtml+xml")], "ok", None),
        (
            "png-as-html",
            png,
            [("Content-Type", "text/html")],
            "skipped",
            "binary payload declared text/html (sniffed image/png)",
        ),
        (
            "gzip-bytes-as-html",
            gzip.compress(HTML),
            [("Content-Type", "text/html")],
            "skipped",
            "binary payload declared text/html (sniffed application/gzip)",
        ),
        (
            "noise-as-html",
            noisy,
            [("Content-Type", "text/html")],
            "skipped",
            "binary payload declared text/html (sniffed binary: ",
        ),
        ("empty-html", b"", [("Content-Type", "text/html")], "skipped", "empty payload"),
        ("blank-html", b"\r\n  \n", [("Content-Type", "text/html")], "skipped", "empty payload"),
        ("no-ct-html", HTML, [], "ok", None),
        ("octet-html", HTML, [("Content-Type", "application/octet-stream")], "ok", None),
        ("empty-ct-html", HTML, [("Content-Type", "")], "ok", None),
        (
            "octet-pdf",
            b"%PDF-1.7\n...",
            [("Content-Type", "application/octet-stream")],
            "skipped",
            "not HTML: application/octet-stream (sniffed application/pdf)",
        ),
        ("no-ct-text", b"just text", [], "skipped", "not HTML: (no Content-Type) (sniffed text/plain)"),
        ("text-plain-html", HTML, [("Content-Type", "text/plain")], "skipped", "not HTML: text/plain"),
        (
            "json",
            b'{"a": 1}',
            [("Content-Type", "Application/JSON; charset=utf-8")],
            "skipped",
            "not HTML: application/json",
        ),
    ]
    data = build_warc(
        [response(f"http://e.org/{name}", body, headers) for name, body, headers, _, _ in cases]
    )
    rows, reader = read_bytes(data)
    assert len(rows) == len(cases) and reader.file_error is None
    for row, (name, body, _, status, error) in zip(rows, cases, strict=True):
        assert row.status == status, name
        assert row.is_html == (status == "ok") and (row.payload is not None) == (status == "ok"), name
        if error is not None:
            assert row.error.startswith(error), (name, row.error)
        if status == "ok":
            assert row.payload == body and row.error is None
    by = {name: row for (name, *_), row in zip(cases, rows, strict=True)}
    assert by["json"].content_mime_type == "application/json" and by["json"].content_charset == "utf-8"
    assert by["json"].content_mime_detected == "application/json"
    assert by["no-ct-html"].notes == ["no Content-Type, payload sniffed as HTML"]
    assert by["png-as-html"].content_mime_detected == "image/png"


def test_sniffer():
    assert sniff_type(b"") is None
    assert sniff_type(b"\xef\xbb\xbf  <!DOCTYPE HTML><p>") == "text/html"
    assert sniff_type("<html><body>x</body></html>".encode("utf-16")) == "text/html"
    assert sniff_type(b"<!-- c --><HTML>") == "text/html"
    assert sniff_type(b"<?xml version='1.0'?><rss/>") == "application/xml"
    assert sniff_type(b"<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'>") == "text/html"
    assert sniff_type(b"GIF89a....") == "image/gif" and sniff_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_type(b"PK\x03\x04") == "application/zip" and sniff_type(b"[1, 2]") == "application/json"
    assert sniff_type(bytes(range(32)) * 8) is None
    assert binary_reason("<html>x</html>".encode("utf-16")) is None
