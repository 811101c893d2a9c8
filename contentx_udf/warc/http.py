"""HTTP(S) inputs that survive flaky servers: retries with exponential backoff, and a stream that
picks up where it broke off.

Common Crawl's HTTP endpoint and object stores answer ``503 Slow Down`` or ``429`` under load and
drop long downloads now and then; a crawl build reads thousands of 1 GB files, so a retry is what
a user wants there.  What is retried (:data:`RETRY_STATUS`, :data:`RETRY_ERRORS`):

* opening the file: HTTP 408/425/429/500/502/503/504 and network errors (connection refused or
  reset, time-outs) -- up to :data:`ATTEMPTS` attempts in all, waiting ``BACKOFF_SECONDS * 2^k``
  (capped at :data:`MAX_BACKOFF_SECONDS`) or the server's ``Retry-After`` when it is shorter;
* reading it: a connection that drops mid-body (a short read, a reset) is opened again with
  ``Range: bytes=<position>-`` and the stream goes on from the same byte, with the same budget
  of attempts; a server that ignores the range (200 instead of 206) is skipped forward to that
  byte instead.

Not retried: 404/410 (``FileNotFoundError``: the file is gone) and other 4xx (``OSError``); they
become the file's ``error`` row, as any unreadable input does.  The defaults are in
:data:`HTTP_RETRY`; ``CONTENTX_HTTP_ATTEMPTS`` and ``CONTENTX_HTTP_BACKOFF`` override them
(environment variables reach the Python workers through ``spark.executorEnv.*``).
"""

from __future__ import annotations

import errno
import io
import os
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.client import HTTPException, IncompleteRead

#: HTTP statuses worth another attempt (the server is busy or failed for a moment).
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
#: Exceptions of the network worth another attempt.
RETRY_ERRORS = (
    ConnectionError,
    TimeoutError,
    socket.timeout,
    IncompleteRead,
    HTTPException,
    urllib.error.URLError,
)
#: Attempts in all (opening and every resumption share them), the first wait, and the longest.
ATTEMPTS = 6
BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
#: Seconds without a byte before a read gives up (and is retried).
TIMEOUT_SECONDS = 120.0
USER_AGENT = "contentx-warc-reader/0.1"


@dataclass(frozen=True)
class RetrySettings:
    """How hard an HTTP input is tried (see the module docstring)."""

    attempts: int = ATTEMPTS
    backoff: float = BACKOFF_SECONDS
    max_backoff: float = MAX_BACKOFF_SECONDS
    timeout: float = TIMEOUT_SECONDS

    @classmethod
    def from_environment(cls) -> RetrySettings:
        return cls(
            attempts=max(1, int(os.environ.get("CONTENTX_HTTP_ATTEMPTS", ATTEMPTS))),
            backoff=max(0.0, float(os.environ.get("CONTENTX_HTTP_BACKOFF", BACKOFF_SECONDS))),
        )

    def wait(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        if retry_after and retry_after.strip().isdigit():
            delay = min(delay, float(retry_after))
        return delay


HTTP_RETRY = RetrySettings()


class RetryingHTTPStream(io.RawIOBase):
    """A read-only stream of one URL that reconnects with a Range request when the body breaks."""

    def __init__(self, url: str, settings: RetrySettings | None = None, sleep=time.sleep) -> None:
        self.url = url
        self.settings = settings or RetrySettings.from_environment()
        self.position = 0
        self.attempt = 0
        self.retries = 0
        self._sleep = sleep
        self._response = self._open()

    # -- io.RawIOBase ------------------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while True:
            try:
                n = self._response.readinto(view)
            except RETRY_ERRORS as exc:
                self._reopen(exc)
                continue
            if n == 0 and self._expected is not None and self.position < self._expected:
                self._reopen(IncompleteRead(b"", self._expected - self.position))
                continue
            self.position += n
            return n

    def close(self) -> None:
        if not self.closed:
            try:
                self._response.close()
            finally:
                super().close()

    # -- connections ---------------------------------------------------------------------------------

    def _open(self):
        """The response from :attr:`position` on, after as many attempts as the settings allow."""
        while True:
            self.attempt += 1
            headers = {"User-Agent": USER_AGENT}
            if self.position:
                headers["Range"] = f"bytes={self.position}-"
            request = urllib.request.Request(self.url, headers=headers)
            retry_after = None
            try:
                response = urllib.request.urlopen(request, timeout=self.settings.timeout)
            except urllib.error.HTTPError as exc:
                if exc.code in (404, 410):
                    raise FileNotFoundError(
                        errno.ENOENT, f"WARC not found: HTTP {exc.code} for {self.url}", self.url
                    ) from exc
                if exc.code not in RETRY_STATUS or self.attempt >= self.settings.attempts:
                    raise OSError(
                        f"cannot open {self.url}: HTTP {exc.code} {exc.reason}{self._tries()}"
                    ) from exc
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
            except RETRY_ERRORS as exc:
                if self.attempt >= self.settings.attempts:
                    raise OSError(f"cannot read {self.url}: {_reason(exc)}{self._tries()}") from exc
            else:
                self._expected = self._length(response)
                if self.position and response.status != 206:  # the range was ignored: skip forward
                    _skip(response, self.position)
                return response
            self.retries += 1
            self._sleep(self.settings.wait(self.attempt, retry_after))

    def _reopen(self, exc: Exception) -> None:
        try:
            self._response.close()
        except Exception:  # noqa: BLE001 - the broken connection may fail to close too
            pass
        if self.attempt >= self.settings.attempts:
            raise OSError(
                f"cannot read {self.url} at byte {self.position}: {_reason(exc)}{self._tries()}"
            ) from exc
        self.retries += 1
        self._sleep(self.settings.wait(self.attempt))
        self._response = self._open()

    def _length(self, response) -> int | None:
        """The total size when the server says it (Content-Length of the rest, or Content-Range)."""
        content_range = response.headers.get("Content-Range", "")
        if "/" in content_range and content_range.rsplit("/", 1)[1].isdigit():
            return int(content_range.rsplit("/", 1)[1])
        length = response.headers.get("Content-Length")
        if length and length.isdigit():
            return int(length) + (self.position if response.status == 206 else 0)
        return None

    def _tries(self) -> str:
        return f" (after {self.attempt} attempts)" if self.attempt > 1 else ""


def _reason(exc: Exception) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        return str(exc.reason)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _skip(response, count: int) -> None:
    while count:
        chunk = response.read(min(count, 1 << 20))
        if not chunk:
            raise IncompleteRead(b"", count)
        count -= len(chunk)


def open_http(url: str, settings: RetrySettings | None = None) -> io.BufferedReader:
    """``url`` as a buffered binary stream with the retries of the module docstring."""
    return io.BufferedReader(RetryingHTTPStream(url, settings), buffer_size=1 << 16)
