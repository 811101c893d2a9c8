"""Opening a WARC input for streaming: local paths, ``file://``, ``http(s)://`` and ``s3://`` URLs."""

from __future__ import annotations

import errno
from typing import BinaryIO
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname


class MissingDependencyError(ImportError, ValueError):
    """An optional dependency is missing (catchable as ImportError or ValueError)."""


def open_input(location: str) -> BinaryIO:
    """Open a WARC for streaming reading.

    Local path or ``file://`` URL -> ``open(path, "rb")`` (missing file -> ``FileNotFoundError``).
    ``http(s)://`` -> a stream that retries busy servers and dropped connections with backoff
    (:mod:`.http`; never the whole file in memory; HTTP 404 -> ``FileNotFoundError``, other
    HTTP errors -> ``OSError``).
    ``s3://`` / ``s3a://`` / ``s3n://`` -> boto3 ``get_object`` body (streamed); without boto3 a
    :class:`MissingDependencyError` (an ImportError *and* ValueError) says ``pip install contentx[s3]``.
    """
    if not isinstance(location, str) or not location:
        raise ValueError(f"WARC location must be a non-empty string, got {location!r}")
    parts = urlsplit(location)
    scheme = parts.scheme.lower() if len(parts.scheme) > 1 else ""  # "C:\\x" is a path, not a URL
    if scheme in ("http", "https"):
        return _open_http(location)
    if scheme in ("s3", "s3a", "s3n"):
        return _open_s3(location, parts.netloc, parts.path)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError(f"file:// URL with a remote host is not supported: {location}")
        path = url2pathname(unquote(parts.path))
    elif scheme:
        raise ValueError(
            f"unsupported WARC location scheme {scheme!r} in {location!r} "
            "(use a local path, file://, http(s):// or s3://)"
        )
    else:
        path = location
    try:
        return open(path, "rb")  # the caller closes it (iter_warc_rows does)
    except FileNotFoundError as exc:
        raise FileNotFoundError(errno.ENOENT, f"WARC file not found: {path}", path) from exc


def _open_http(url: str) -> BinaryIO:
    from .http import open_http

    return open_http(url)  # retried with backoff, resumed with a Range request (warc/http.py)


def _open_s3(location: str, bucket: str, path: str) -> BinaryIO:
    try:
        import boto3
    except ImportError as exc:
        raise MissingDependencyError(
            f"reading {location} needs boto3, which is not installed: pip install contentx[s3]"
        ) from exc
    key = path.lstrip("/")
    if not bucket or not key:
        raise ValueError(f"S3 location must look like s3://bucket/key, got {location!r}")
    client = boto3.client("s3")  # endpoint and credentials: the standard AWS_* environment
    try:
        obj = client.get_object(Bucket=bucket, Key=key)
    except Exception as exc:  # botocore.exceptions.ClientError, without importing botocore here
        raise _s3_error(exc, location, bucket) from exc
    return obj["Body"]


_S3_DENIED = {"AccessDenied", "403", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch"}


def _s3_error(exc: Exception, location: str, bucket: str) -> Exception:
    """One readable line for a failed S3 ``get_object`` (the exception to raise instead)."""
    error = (getattr(exc, "response", None) or {}).get("Error") or {}
    code = str(error.get("Code") or "")
    if code == "NoSuchBucket":
        return FileNotFoundError(errno.ENOENT, f"S3 bucket {bucket!r} does not exist", location)
    if code in ("NoSuchKey", "404"):
        return FileNotFoundError(errno.ENOENT, "WARC not found (no such S3 object)", location)
    if code in _S3_DENIED or code == "ExpiredToken":
        return PermissionError(
            errno.EACCES, f"S3 access denied ({code} {error.get('Message') or ''})".strip(), location
        )
    if code:
        return OSError(f"S3 error for {location}: {code} {error.get('Message') or ''}".strip())
    return OSError(f"cannot open {location}: {type(exc).__name__}: {exc}")
