"""HTTP inputs against a flaky server on 127.0.0.1: busy answers retried with backoff, a dropped
connection resumed with a Range request (or skipped forward when the server ignores ranges),
a missing file and a server that never recovers reported at once / after the attempts."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from contentx_udf.warc.http import RetryingHTTPStream, RetrySettings
from contentx_udf.warc.reader import iter_warc_rows

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.warc.gz"


class Flaky:
    """What the server does, request by request: ``plan`` is a list of ``"503"``, ``"drop"``
    (send half of the body, then close), ``"ok"``; after the plan, ``"ok"``."""

    def __init__(self, body: bytes, plan: list[str], honour_range: bool = True) -> None:
        self.body, self.plan, self.honour_range = body, list(plan), honour_range
        self.requests: list[str | None] = []  # the Range header of each request


def start_server(flaky: Flaky) -> http.server.ThreadingHTTPServer:
    """A server on 127.0.0.1 (a free port) that plays ``flaky``'s plan for ``/file.warc.gz``
    (404 for any other path); call ``shutdown()`` and ``server_close()`` when done."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):  # noqa: N802
            flaky.requests.append(self.headers.get("Range"))
            if self.path != "/file.warc.gz":
                self.send_error(404)
                return
            action = flaky.plan.pop(0) if flaky.plan else "ok"
            if action == "503":
                self.send_response(503)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = 0
            ranged = self.headers.get("Range")
            if ranged and flaky.honour_range:
                start = int(ranged.split("=")[1].rstrip("-"))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(flaky.body) - 1}/{len(flaky.body)}")
            else:
                self.send_response(200)
            rest = flaky.body[start:]
            self.send_header("Content-Length", str(len(rest)))
            self.end_headers()
            if action == "drop":
                self.wfile.write(rest[: len(rest) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(rest)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture()
def serve():
    """``serve(flaky)`` starts a server for the test and returns its base URL."""
    servers = []

    def start(flaky: Flaky) -> str:
        servers.append(start_server(flaky))
        return f"http://127.0.0.1:{servers[-1].server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


FAST = RetrySettings(attempts=4, backoff=0.01, max_backoff=0.05, timeout=10)


def read_all(url: str, settings: RetrySettings = FAST) -> tuple[bytes, RetryingHTTPStream]:
    stream = RetryingHTTPStream(url, settings)
    chunks = []
    while chunk := stream.read(7_000):
        chunks.append(chunk)
    stream.close()
    return b"".join(chunks), stream


def test_busy_server_is_retried_with_backoff(serve):
    body = SAMPLE.read_bytes()
    flaky = Flaky(body, ["503", "503"])
    waits: list[float] = []
    stream = RetryingHTTPStream(serve(flaky) + "/file.warc.gz", FAST, sleep=waits.append)
    assert stream.read() == body
    assert stream.retries == 2 and len(flaky.requests) == 3
    assert waits == [0.0, 0.0]  # the server's Retry-After: 0 is shorter than the backoff


def test_backoff_doubles_up_to_its_cap():
    settings = RetrySettings(attempts=9, backoff=1.0, max_backoff=8.0)
    assert [settings.wait(k) for k in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert settings.wait(3, retry_after="2") == 2.0


@pytest.mark.parametrize("honour_range", [True, False])
def test_a_dropped_connection_goes_on_from_the_same_byte(serve, honour_range):
    body = SAMPLE.read_bytes()
    flaky = Flaky(body, ["drop", "drop"], honour_range=honour_range)
    data, stream = read_all(serve(flaky) + "/file.warc.gz")
    assert data == body
    assert stream.retries == 2
    ranges = [r for r in flaky.requests if r]
    assert len(ranges) == 2 and all(r.startswith("bytes=") and r != "bytes=0-" for r in ranges)


def test_missing_file_is_not_retried(serve):
    flaky = Flaky(b"x", [])
    with pytest.raises(FileNotFoundError, match="HTTP 404"):
        RetryingHTTPStream(serve(flaky) + "/gone.warc.gz", FAST)
    assert len(flaky.requests) == 1


def test_a_server_that_never_recovers_fails_after_the_attempts(serve):
    flaky = Flaky(b"x", ["503"] * 10)
    with pytest.raises(OSError, match=r"HTTP 503 .*after 4 attempts"):
        RetryingHTTPStream(serve(flaky) + "/file.warc.gz", FAST)
    assert len(flaky.requests) == 4


def test_warc_records_through_a_flaky_server_equal_the_local_file(serve, monkeypatch):
    monkeypatch.setenv("CONTENTX_HTTP_BACKOFF", "0")
    flaky = Flaky(SAMPLE.read_bytes(), ["503", "drop", "drop"])
    url = serve(flaky) + "/file.warc.gz"

    def records(location: str) -> list[tuple]:
        return [
            (r.warc_record_id, r.warc_record_offset, r.payload, r.error) for r in iter_warc_rows(location)
        ]

    assert records(url) == records(str(SAMPLE))
    assert flaky.plan == []  # every failure was met and survived
