"""Every supported WARC location opens as a byte stream that reads into the same rows: a local
path, a file:// URL, an http(s):// URL (streamed); a missing file or HTTP 404 raises
FileNotFoundError, an unsupported scheme ValueError, and s3:// without boto3 an error that is both
ImportError and ValueError and names ``pip install contentx[s3]``. contentx_udf.warc.inputs, no
Spark.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading

import pytest

from contentx_udf.warc.inputs import open_input
from contentx_udf.warc.reader import iter_warc_rows

from .builders import mixed_warc, read_bytes

# ------------------------------------------------------------------------------------------------
# open_input
# ------------------------------------------------------------------------------------------------


def test_open_input_local_and_errors(tmp_path):
    path = tmp_path / "a b.warc.gz"
    path.write_bytes(mixed_warc())
    for loc in (str(path), path.as_uri()):
        with open_input(loc) as fh:
            assert fh.read(2) == b"\x1f\x8b"
    missing = tmp_path / "nope.warc.gz"
    with pytest.raises(FileNotFoundError, match="WARC file not found: .*nope.warc.gz"):
        open_input(str(missing))
    with pytest.raises(FileNotFoundError):
        list(iter_warc_rows(missing.as_uri()))
    with pytest.raises(ValueError, match="unsupported WARC location scheme"):
        open_input("ftp://example.org/x.warc.gz")


def test_open_input_s3_without_boto3(monkeypatch):
    # boto3 made unimportable (a None in sys.modules makes ``import boto3`` raise ImportError), so
    # the test runs whether or not the [test] extra installed it
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(ValueError, match=r"pip install contentx\[s3\]") as info:
        open_input("s3://commoncrawl/crawl-data/x.warc.gz")
    assert isinstance(info.value, ImportError)
    with pytest.raises(ImportError):
        open_input("s3a://bucket/key.warc.gz")


@pytest.fixture
def http_server(tmp_path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_open_input_http_streams(http_server):
    root, base = http_server
    data = mixed_warc()
    (root / "x.warc.gz").write_bytes(data)
    expected, _ = read_bytes(data)
    rows = list(iter_warc_rows(f"{base}/x.warc.gz", "x.warc.gz"))
    assert [(r.url, r.warc_record_offset, r.payload) for r in rows] == [
        (r.url, r.warc_record_offset, r.payload) for r in expected
    ]
    with pytest.raises(FileNotFoundError, match="HTTP 404"):
        open_input(f"{base}/missing.warc.gz")
