"""An HTML payload is the HTTP body as the server meant it: de-chunked when the body really is
chunked, content-decoded when Content-Encoding is honest (gzip, x-gzip, deflate zlib or raw, br,
stacked codings), and otherwise the raw bytes with a note saying why (lying or unknown codings,
bad chunk framing); at most max_html_bytes are kept (0 or None: no limit), and no more than
max_html_bytes + 1 bytes are ever decoded, so decompression bombs stay bounded.
contentx_udf.warc.payload (through the reader), no Spark.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator

import brotli
import pytest
from warcio.archiveiterator import ArchiveIterator

from contentx_udf.warc import reader as reader_module
from contentx_udf.warc.payload import _looks_chunked

from .builders import (
    HTML,
    LOCAL_DATA,
    build_warc,
    chunked,
    manifest,
    raw_http_body,
    read_bytes,
    read_file,
    real_index,
    record_at,
    response,
    sha256,
    shared,
)

# ------------------------------------------------------------------------------------------------
# Shared corpus: real files and the hostile fixture
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, None])
def test_hostile_no_limit_keeps_whole_page(limit):
    path = shared("fixtures/hostile.warc.gz")
    man = {r["index"]: r for r in manifest("hostile")["records"]}
    rows, _ = read_file(path, max_html_bytes=limit)
    big = rows[3]
    assert big.payload_length == len(big.payload) == 5_263_139
    assert sha256(big.payload) == man[4]["payload_sha256"]
    assert not big.notes


def test_real_html_payloads_equal_warcio_decoding():
    """Where warcio's own decoding works (everything but brotli), ok payloads are identical to it."""
    files = [e["file"] for e in real_index() if "brotli" not in e["file"]]
    if not files:
        pytest.skip("shared WARC corpus not available")
    checked = 0
    for name in files:
        path = shared(f"real/{name}")
        rows, _ = read_file(path, max_html_bytes=None)
        ok = {r.warc_record_offset: r.payload for r in rows if r.status == "ok"}
        with open(path, "rb") as fh:
            it = ArchiveIterator(fh)
            for rec in it:
                if rec.rec_type == "response":
                    data = rec.content_stream().read()
                    offset = it.get_record_offset()
                    if offset in ok:
                        assert ok.pop(offset) == data, (name, offset)
                        checked += 1
        assert ok == {}
    assert checked > 400


def test_brotli_gzip_and_chunked_real_files():
    (br,) = [
        r
        for r in read_file(shared("real/wget__ukwa-transfer-compression-brotli.warc.gz"))[0]
        if r.warc_type == "response"
    ]
    path = shared("real/wget__ukwa-transfer-compression-brotli.warc.gz")
    assert br.status == "ok" and br.payload == brotli.decompress(raw_http_body(path, br.warc_record_offset))
    assert br.payload.lstrip().startswith(b"<html>") and br.payload_length == len(br.payload)
    assert not br.notes

    path = shared("real/wget__ukwa-transfer-compression-gzip.warc.gz")
    (gz,) = [r for r in read_file(path)[0] if r.warc_type == "response"]
    assert gz.status == "ok" and gz.payload == gzip.decompress(raw_http_body(path, gz.warc_record_offset))
    assert not gz.notes

    path = shared("real/wget__webarchive-commons-IAH-urls-wget.warc")  # chunked kept in payload by wget
    rows, _ = read_file(path)
    dechunked = 0
    for row in rows:
        raw = raw_http_body(path, row.warc_record_offset) if row.status == "ok" else b""
        if raw and _looks_chunked(raw[:4096]) and row.payload != raw:
            assert b"\r\n0\r\n" not in row.payload[-16:]
            dechunked += 1
    assert dechunked >= 1


@pytest.mark.parametrize(
    "name",
    [
        "wayback-aql__vk.warc.gz",
        "wayback-aql__sogou.warc.gz",
        "wayback-aql__naver.warc.gz",
        "wayback-aql__chefkoch.warc.gz",
        "wayback-aql__baidu.warc.gz",
        "clueweb09-ja__resiliparse-clueweb-quirk.warc.gz",
    ],
)
def test_lying_content_encoding_kept_raw(name):
    path = shared(f"real/{name}")
    rows, reader = read_file(path, max_html_bytes=None)
    assert rows and reader.file_error is None
    lie_ce = "content-encoding gzip declared but payload not gzip: kept raw bytes"
    lie_te = "transfer-encoding chunked declared but body not chunked: kept raw bytes"
    for row in rows:
        assert row.status == "ok" and row.fetch_status == 200  # also for "HTTP/1.1 HTTP/1.1 200 OK"
        assert row.payload == raw_http_body(path, row.warc_record_offset)
        if lie_ce not in row.notes:  # baidu: 1 of 20 records declares nothing
            assert name.startswith("wayback-aql__baidu")
        if name.startswith("wayback"):
            assert (lie_te in row.notes) == (lie_ce in row.notes)
    if name.startswith("clueweb"):  # WARC/0.18, invalid WARC-Date, empty WARC-Identified-Payload-Type
        assert len(rows) == 29
        for row in rows:
            assert row.fetch_time is None
            assert "invalid WARC-Date '2008-10-294T05:21:46-0700'" in row.notes
            assert row.content_mime_detected == "text/html"  # sniffed, the WIPT header is empty
            assert row.content_charset == "euc-jp"


# ------------------------------------------------------------------------------------------------
# Small real files shipped in tests/data (always available)
# ------------------------------------------------------------------------------------------------


def test_local_real_chunked_response():
    path = LOCAL_DATA / "warcprox__warcio-example-iana-chunked.warc"
    rows, reader = read_file(path)
    (row,) = rows
    raw = raw_http_body(path, row.warc_record_offset)
    assert _looks_chunked(raw) and raw != row.payload
    with open(path, "rb") as fh:
        expected = [rec.content_stream().read() for rec in ArchiveIterator(fh) if rec.rec_type == "response"]
    assert [row.payload] == expected
    assert row.status == "ok" and row.payload.rstrip().endswith(b"</html>") and not row.notes
    assert record_at(path, row.warc_record_offset, row.warc_record_length)[0][1] == row.url


# ------------------------------------------------------------------------------------------------
# Generated WARCs: payload decoding
# ------------------------------------------------------------------------------------------------


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


ENCODINGS = {
    "gzip": (lambda b: gzip.compress(b), "gzip"),
    "x-gzip": (lambda b: gzip.compress(b), "x-gzip"),
    "gzip-multimember": (lambda b: gzip.compress(b[:50]) + gzip.compress(b[50:]), "gzip"),
    "deflate-zlib": (zlib.compress, "deflate"),
    "deflate-raw": (_raw_deflate, "deflate"),
    "br": (brotli.compress, "br"),
    "gzip-then-br": (lambda b: brotli.compress(gzip.compress(b)), "gzip, br"),
    "uppercase": (lambda b: gzip.compress(b), "GZIP"),
}


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_honest_content_encodings_are_decoded(name):
    encode, header = ENCODINGS[name]
    body = encode(HTML)
    headers = [("Content-Type", "text/html"), ("Content-Encoding", header)]
    rows, _ = read_bytes(build_warc([response("http://e.org/", body, headers)]))
    (row,) = rows
    assert row.status == "ok" and row.payload == HTML and row.payload_length == len(HTML)
    assert row.notes == []


@pytest.mark.parametrize("header", ["gzip", "x-gzip", "deflate", "br", "gzip, br"])
def test_lying_content_encodings_keep_raw_bytes(header):
    headers = [("Content-Type", "text/html"), ("Content-Encoding", header)]
    rows, _ = read_bytes(build_warc([response("http://e.org/", HTML, headers)]))
    (row,) = rows
    assert row.status == "ok" and row.payload == HTML and row.payload_length == len(HTML)
    first = header.split(",")[-1].strip()
    assert f"content-encoding {first} declared but payload not {first}: kept raw bytes" in row.notes


def test_unknown_encoding_and_crawler_renamed_headers():
    rows, _ = read_bytes(
        build_warc(
            [
                response(
                    "http://e.org/1", HTML, [("Content-Type", "text/html"), ("Content-Encoding", "zstd")]
                ),
                response(  # Common Crawl's Nutch: payload stored decoded, headers renamed
                    "http://e.org/2",
                    HTML,
                    [
                        ("Content-Type", "text/html"),
                        ("X-Crawler-Content-Encoding", "gzip"),
                        ("X-Crawler-Transfer-Encoding", "chunked"),
                        ("X-Crawler-Content-Length", "1234"),
                    ],
                ),
                response(
                    "http://e.org/3", HTML, [("Content-Type", "text/html"), ("Content-Encoding", "identity")]
                ),
            ]
        )
    )
    assert [r.payload for r in rows] == [HTML] * 3
    assert rows[0].notes == ["content-encoding zstd not supported: kept raw bytes"]
    assert rows[1].notes == [] and rows[2].notes == []


def test_chunked_transfer_encoding():
    te = [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")]
    rows, _ = read_bytes(
        build_warc(
            [
                response("http://e.org/1", chunked(HTML), te),
                response(
                    "http://e.org/2",
                    chunked(gzip.compress(HTML), (10, 20)),
                    te + [("Content-Encoding", "gzip")],
                ),
                response("http://e.org/3", HTML, te),  # declared but not chunked
                response("http://e.org/4", chunked(HTML)[:-5], te),  # no final zero-size chunk
                response("http://e.org/5", chunked(HTML)[:60], te),  # ends inside a chunk
            ]
        )
    )
    assert rows[0].payload == HTML and rows[0].notes == []
    assert rows[1].payload == HTML and rows[1].notes == []
    assert rows[2].payload == HTML
    assert rows[2].notes == ["transfer-encoding chunked declared but body not chunked: kept raw bytes"]
    assert rows[3].payload == HTML and any("no final zero-size chunk" in n for n in rows[3].notes)
    assert HTML.startswith(rows[4].payload) and any("ends inside a chunk" in n for n in rows[4].notes)
    assert all(r.status == "ok" for r in rows)


def test_max_html_bytes_cut_and_no_limit():
    body = b"<html><body>" + b"x" * 4976 + b"</body></html>"
    assert len(body) == 5002
    data = build_warc(
        [
            response("http://e.org/plain", body, [("Content-Type", "text/html")]),
            response(
                "http://e.org/gz",
                gzip.compress(body),
                [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            ),
        ]
    )
    plain, gz = read_bytes(data, max_html_bytes=1000)[0]
    assert plain.payload == body[:1000] and plain.payload_length == 5002
    assert plain.notes == ["payload cut at 1000 of 5002 bytes (max_html_bytes)"]
    # content-decoded bodies are decoded only up to the bound: the full length stays unknown
    assert gz.payload == body[:1000] and gz.payload_length is None
    assert any(n.startswith("payload cut at 1000 bytes (max_html_bytes)") for n in gz.notes)
    for limit in (0, None):
        rows, _ = read_bytes(data, max_html_bytes=limit)
        assert [(r.payload, r.payload_length, r.notes) for r in rows] == [(body, 5002, [])] * 2


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate"])
def test_decompression_bombs_are_bounded(coding):
    """A 64 MiB bomb: only max_html_bytes + 1 bytes are decoded (time and memory stay small)."""
    size = 64 * 1024 * 1024
    if coding == "br":
        bomb = brotli.compress(b"<html>" + b" " * size, quality=1)
    else:
        c = zlib.compressobj(9, zlib.DEFLATED, 31 if coding == "gzip" else 15)
        spaces = b" " * (1 << 20)
        bomb = c.compress(b"<html>") + b"".join(c.compress(spaces) for _ in range(64)) + c.flush()
    assert len(bomb) < 200_000
    data = build_warc(
        [response("http://bomb.org/", bomb, [("Content-Type", "text/html"), ("Content-Encoding", coding)])]
    )
    counted = {"out": 0}
    real_collect = reader_module.collect_body

    def spy(blocks: Iterator[bytes], *args, **kw):
        def counting():
            for b in blocks:
                counted["out"] += len(b)
                yield b

        return real_collect(counting(), *args, **kw)

    reader_module.collect_body = spy
    try:
        (row,) = read_bytes(data, max_html_bytes=10_000)[0]
    finally:
        reader_module.collect_body = real_collect
    assert counted["out"] == 10_001  # never more than max_html_bytes + 1 decoded bytes handed on
    assert row.status == "ok" and row.payload == b"<html>" + b" " * 9_994
    assert row.payload_length is None
    assert any(
        n.startswith("payload cut at 10000 bytes (max_html_bytes); full decoded length unknown")
        for n in row.notes
    )
