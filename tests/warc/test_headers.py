"""WARC and HTTP header fields parse leniently into row fields: WARC/0.18 records, invalid or
non-ISO WARC-Dates, malformed status lines and conflicting Content-Type headers become None values
and notes, never errors; a Common Crawl metadata record fills content_charset and
content_languages of the content record it follows. contentx_udf.warc.headers, no Spark.
"""

from __future__ import annotations

import datetime as dt
import gzip

from .builders import HTML, build_warc, read_bytes, read_file, response, shared

# ------------------------------------------------------------------------------------------------
# Shared corpus: Common Crawl metadata records
# ------------------------------------------------------------------------------------------------


def test_common_crawl_metadata_fills_charset_and_languages():
    rows, reader = read_file(shared("real/cc-2020-34__resiliparse-warcfile.warc.gz"))
    assert len(rows) == 16 and reader.counts["metadata"] == 16 and reader.counts["request"] == 17
    assert all(r.content_charset and r.content_languages for r in rows)
    by_url = {r.url: r for r in rows}
    ru = by_url["http://01spb.ru/company/"]
    assert ru.content_charset == "windows-1251" and ru.content_languages.split(",")[0] == "ru"
    # Nutch stored the payload decoded and renamed the headers to X-Crawler-*: nothing to decode
    cn = by_url["http://003338.cn/l41/481397.html"]
    assert cn.http_content_type == "text/html"  # no charset in HTTP; charset from metadata
    assert cn.content_charset == "utf-8" and cn.content_languages == "zh"
    assert cn.payload.startswith(b"<html>") and not cn.notes
    assert all(not any("encoding" in n for n in r.notes) for r in rows)
    assert {r.content_mime_detected for r in rows} == {"text/html", "application/xhtml+xml"}  # WIPT

    (row,) = read_file(shared("real/cc-2024-22__whirlwind.warc.gz"))[0]
    assert (row.content_charset, row.content_languages) == ("utf-8", "es")


# ------------------------------------------------------------------------------------------------
# Generated WARCs: header quirks
# ------------------------------------------------------------------------------------------------


def test_warc_018_bad_date_truncated_header_and_status_lines():
    data = build_warc(
        [
            response(
                "http://e.org/1", HTML, date="2008-10-294T05:21:46-0700", extra={"WARC-Truncated": "length"}
            ),
            response("http://e.org/2", HTML, status="HTTP/1.1 200 OK"),  # "HTTP/1.1 HTTP/1.1 200 OK"
            response("http://e.org/3", HTML, status="404"),  # no reason phrase
            response("http://e.org/4", HTML, status="OK"),  # no code at all
            response("http://e.org/5", HTML, status="200OK"),
            response("http://e.org/6", HTML, date="2008-10-29T05:21:46-0700"),
            response("http://e.org/7", HTML, date="20080430204825"),
            response(
                "http://e.org/8",
                HTML,
                [("Content-Type", "text/html; charset=ISO-8859-1"), ("content-type", "text/plain")],
            ),
            response("http://e.org/9", HTML, [("Content-Type", "text/html"), ("Content-Type", "text/html")]),
        ],
        version="0.18",
    )
    assert data[:30].find(b"") == 0 and b"WARC/0.18" in gzip.decompress(data)[:20]
    rows, reader = read_bytes(data)
    assert len(rows) == 9 and reader.file_error is None and all(r.status == "ok" for r in rows)
    assert rows[0].fetch_time is None
    assert rows[0].notes == ["invalid WARC-Date '2008-10-294T05:21:46-0700'", "WARC-Truncated: length"]
    assert [r.fetch_status for r in rows[1:5]] == [200, 404, None, 200]
    assert rows[5].fetch_time == dt.datetime(2008, 10, 29, 12, 21, 46, tzinfo=dt.UTC)
    assert rows[6].fetch_time == dt.datetime(2008, 4, 30, 20, 48, 25, tzinfo=dt.UTC)
    assert rows[7].http_content_type == "text/html; charset=ISO-8859-1"
    assert rows[7].content_charset == "iso-8859-1" and rows[7].content_mime_type == "text/html"
    assert rows[7].notes == [
        "conflicting Content-Type headers: using 'text/html; charset=ISO-8859-1', ignoring 'text/plain'"
    ]
    assert rows[8].notes == []  # duplicates that agree are no conflict
