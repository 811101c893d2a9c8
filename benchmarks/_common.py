"""Shared by the Spark benchmarks: the scale fixture, its copies, and WARCs of edited pages."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "warc" / "fixtures"
SCALE_FIXTURE = FIXTURES / "scrapinghub-scale.warc.gz"


def scale_copies(copies: int, directory: Path) -> list[str]:
    """``copies`` copies of the scale fixture (181 HTML pages each) in ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(copies):
        dst = directory / f"copy-{i:03d}.warc.gz"
        shutil.copy(SCALE_FIXTURE, dst)
        files.append(str(dst))
    return files


BODY = re.compile(rb"(<body[^>]*>)", re.I)
DATED = rb"\1<p>Updated on 2 June 2024, 10:15 by the web desk.</p>"


def add_dated_paragraph(html: bytes) -> bytes:
    """The page with a dated paragraph right after ``<body>``."""
    return BODY.sub(DATED, html, count=1)


def rewrite_html(src: Path, dst: Path, edit: Callable[[bytes], bytes], keep_others: bool = True) -> int:
    """Copy the WARC ``src`` to ``dst`` with ``edit`` applied to every HTML response's payload (other
    records copied as they are, or left out); returns the pages ``edit`` changed."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    changed = 0
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        writer = WARCWriter(fout, gzip=True)
        for rec in ArchiveIterator(fin):
            ctype = rec.http_headers.get_header("Content-Type", "") if rec.http_headers else ""
            if rec.rec_type != "response" or "html" not in ctype.lower():
                if keep_others:
                    writer.write_record(rec)
                continue
            body = rec.content_stream().read()
            new = edit(body)
            changed += new != body
            headers = StatusAndHeaders(
                rec.http_headers.statusline, [("Content-Type", ctype)], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(
                    rec.rec_headers.get_header("WARC-Target-URI"),
                    "response",
                    payload=io.BytesIO(new),
                    http_headers=headers,
                    warc_headers_dict={"WARC-Date": rec.rec_headers.get_header("WARC-Date")},
                )
            )
    return changed
