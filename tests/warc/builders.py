"""Shared helpers for the WARC reader tests: where the WARC corpora are, reading a file or bytes into
rows, the Common Crawl index join-back, and small WARCs generated with warcio's WARCWriter.

The tests beside this module are of two kinds:

* tests on the shared corpus (``../shared/warc`` beside the repo root: real crawler files and the
  generated fixtures with manifests); they skip when it is absent;
* tests on small WARCs generated here with warcio's WARCWriter (and two small real files copied
  to ``tests/data/warc``), so CI without the shared data still covers every behaviour.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from contentx_udf.warc.reader import WarcReader
from contentx_udf.warc.row import WarcRow

from ..conftest import SHARED

# ------------------------------------------------------------------------------------------------
# Where the WARC corpora are, reading them
# ------------------------------------------------------------------------------------------------


SHARED_WARC = SHARED / "warc"
LOCAL_DATA = Path(__file__).resolve().parents[1] / "data" / "warc"


def shared(rel: str) -> Path:
    path = SHARED_WARC / rel
    if not path.exists():
        pytest.skip(f"shared WARC corpus not available: {path}")
    return path


def manifest(name: str) -> dict:
    return json.loads(shared(f"fixtures/{name}.manifest.json").read_text())


def real_index() -> list[dict]:
    path = SHARED_WARC / "real" / "INDEX.json"
    return json.loads(path.read_text()) if path.exists() else []


def read_file(path: Path, **kw) -> tuple[list[WarcRow], WarcReader]:
    with open(path, "rb") as fh:
        reader = WarcReader(fh, path.name, **kw)
        return list(reader), reader


def read_bytes(data: bytes, **kw) -> tuple[list[WarcRow], WarcReader]:
    reader = WarcReader(io.BytesIO(data), "test.warc.gz", **kw)
    return list(reader), reader


def record_at(path: Path, offset: int, length: int):
    """The Common Crawl index join-back: the bytes at (offset, length) alone are one record."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        chunk = fh.read(length)
    assert len(chunk) == length
    records = []
    for rec in ArchiveIterator(io.BytesIO(chunk)):
        records.append(
            (
                rec.rec_type,
                rec.rec_headers.get_header("WARC-Target-URI"),
                rec.rec_headers.get_header("WARC-Record-ID"),
            )
        )
        rec.raw_stream.read()
    return records


def raw_http_body(path: Path, offset: int) -> bytes:
    """The stored HTTP body of the record at ``offset`` (after the HTTP headers, nothing decoded)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        rec = next(iter(ArchiveIterator(fh)))
        return rec.raw_stream.read()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------------
# Generating small WARCs with warcio's WARCWriter
# ------------------------------------------------------------------------------------------------

DATE = "2024-05-18T01:58:10Z"
HTML = (
    b"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>T</title></head>"
    b"<body><article><p>Hello reader, this is the article text.</p></article></body></html>\n"
)


def uid(n: int) -> str:
    return f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>"


RecordFn = Callable[[WARCWriter], object]


def build_warc(records: list[RecordFn], *, gzip_members: bool = True, version: str | None = None) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip_members, warc_version=version)
    for make in records:
        writer.write_record(make(writer))
    return out.getvalue()


def warcinfo() -> RecordFn:
    return lambda w: w.create_warcinfo_record("test.warc.gz", {"software": "contentx tests"})


def response(
    url: str,
    body: bytes,
    headers: list[tuple[str, str]] | None = None,
    *,
    status: str = "200 OK",
    protocol: str = "HTTP/1.1",
    rid: int | None = None,
    date: str = DATE,
    extra: dict[str, str] | None = None,
) -> RecordFn:
    if headers is None:
        headers = [("Content-Type", "text/html; charset=utf-8")]

    def make(w: WARCWriter):
        warc_headers = {"WARC-Date": date, **(extra or {})}
        if rid is not None:
            warc_headers["WARC-Record-ID"] = uid(rid)
        return w.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            length=len(body),
            http_headers=StatusAndHeaders(status, list(headers), protocol=protocol),
            warc_headers_dict=warc_headers,
        )

    return make


def request(url: str) -> RecordFn:
    def make(w: WARCWriter):
        http = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True)
        return w.create_warc_record(url, "request", http_headers=http, warc_headers_dict={"WARC-Date": DATE})

    return make


def payload_record(url: str, rec_type: str, body: bytes, content_type: str, **warc_headers: str) -> RecordFn:
    """A record of ``rec_type`` whose block is ``body`` itself (no HTTP headers)."""

    def make(w: WARCWriter):
        return w.create_warc_record(
            url,
            rec_type,
            payload=io.BytesIO(body),
            length=len(body),
            warc_content_type=content_type,
            warc_headers_dict={"WARC-Date": DATE, **warc_headers},
        )

    return make


def metadata(url: str, concurrent_to: int, body: bytes) -> RecordFn:
    return payload_record(
        url, "metadata", body, "application/warc-fields", **{"WARC-Concurrent-To": uid(concurrent_to)}
    )


def resource(url: str, body: bytes, content_type: str) -> RecordFn:
    return payload_record(url, "resource", body, content_type)


def dns_response(host: str) -> RecordFn:
    body = f"20240518015810\n{host}.\t300\tIN\tA\t192.0.2.1\n".encode()
    return payload_record(f"dns:{host}", "response", body, "text/dns")


def revisit(url: str) -> RecordFn:
    def make(w: WARCWriter):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        rec = w.create_revisit_record(
            url, "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", url, "2024-01-01T00:00:00Z", http_headers=http
        )
        rec.rec_headers.replace_header("WARC-Date", DATE)
        return rec

    return make


def cc_metadata_body(charset: str = "UTF-8", langs: tuple[str, ...] = ("es", "en")) -> bytes:
    cld2 = {
        "reliable": True,
        "text-bytes": 3080,
        "languages": [{"code": c, "text-covered": 0.5} for c in langs],
    }
    fields = f"fetchTimeMs: 258\r\ncharset-detected: {charset}\r\nlanguages-cld2: {json.dumps(cld2)}\r\n\r\n"
    return fields.encode()


def chunked(data: bytes, sizes: tuple[int, ...] = (7, 100, 3)) -> bytes:
    out, pos, i = [], 0, 0
    while pos < len(data):
        n = sizes[i % len(sizes)]
        piece = data[pos : pos + n]
        ext = ";ext=1" if i == 1 else ""
        out.append(b"%x%s\r\n%s\r\n" % (len(piece), ext.encode(), piece))
        pos += n
        i += 1
    out.append(b"0\r\n\r\n")
    return b"".join(out)


def member_offsets(data: bytes) -> list[tuple[int, int, str]]:
    """(offset, length, type) of every record, as warcio reports them."""
    spans = []
    it = ArchiveIterator(io.BytesIO(data))
    for rec in it:
        rec.raw_stream.read()
        spans.append((it.get_record_offset(), it.get_record_length(), rec.rec_type))
    return spans


BIG_TEXT = "".join(random.Random(7).choices("abcdefghij klmnop\n", k=40_000)).encode()


def mixed_warc(*, gzip_members: bool = True) -> bytes:
    big = BIG_TEXT
    return build_warc(
        [
            warcinfo(),
            request("http://Example.COM:8080/a"),
            response("http://Example.COM:8080/a", HTML, rid=1),
            metadata("http://Example.COM:8080/a", 1, cc_metadata_body()),
            response(
                "https://gz.example.org/",
                gzip.compress(HTML),
                [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                rid=2,
            ),
            response(
                "https://big.example.org/",
                chunked(b"<html><body><p>" + big + b"</p></body></html>", (4000, 333)),
                [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
                rid=3,
            ),
            response(
                "https://pdf.example.org/x.pdf",
                b"%PDF-1.4\n" + bytes(range(256)) * 4,
                [("Content-Type", "application/pdf")],
                rid=4,
            ),
            revisit("https://gz.example.org/"),
            resource("file:///crawl.log", b"log line 1\nlog line 2\n", "text/plain"),
            dns_response("www.example.org"),
        ],
        gzip_members=gzip_members,
    )
