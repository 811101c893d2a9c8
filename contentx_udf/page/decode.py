"""Browser-like decoding of HTML bytes to text.

Order of evidence (WHATWG "encoding sniffing", simplified):

1. a byte-order mark (UTF-8, UTF-16 LE/BE);
2. the ``charset`` parameter of the HTTP ``Content-Type`` header;
3. ``<meta charset>`` / ``<meta http-equiv="Content-Type" content="...; charset=...">``
   in the first 4 KiB (we look at 8 KiB, pages put long ``<head>`` blocks first);
4. UTF-8, if the bytes are valid UTF-8;
5. a statistical detector (``charset_normalizer``) as the last resort;
6. windows-1252 with replacement characters.

A declared charset that does not decode the bytes strictly is not trusted blindly: the next
piece of evidence is tried, and only if nothing decodes cleanly is the first declaration used
with ``errors="replace"``.  Labels are mapped to the encodings browsers really use
(``iso-8859-1`` is windows-1252, ``gb2312`` is GBK/GB18030, ``euc-kr`` is cp949, ...).
Undecodable bytes never raise.
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass

# WHATWG label -> the Python codec browsers effectively use for it.
_SUPERSETS = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "windows-31j": "cp932",
    "tis-620": "cp874",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "x-user-defined": "cp1252",
    "unicode": "utf-16-le",
    "utf-16": "utf-16-le",
}

_META_RE = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""",
    re.IGNORECASE,
)
_HTTP_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

#: How many leading bytes are searched for a ``<meta charset>``.
META_SCAN_BYTES = 8192
#: How many bytes the statistical detector looks at (it is slow on big inputs).
DETECTOR_BYTES = 65536


@dataclass(frozen=True)
class Decoded:
    """Decoded page text and where its charset came from."""

    text: str
    encoding: str
    source: str  # "bom", "http", "meta", "utf-8", "detector", "fallback", "str" (or why UTF-8 won)
    replaced: bool  # True when undecodable bytes were replaced


def normalize_charset(label: str | None) -> str | None:
    """Map a charset label to the Python codec a browser would use, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _SUPERSETS.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # codecs.lookup canonicalises some supersets back; re-apply the browser mapping.
    return _SUPERSETS.get(name, name)


def charset_from_content_type(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a ``Content-Type`` header value, if any."""
    if not content_type:
        return None
    m = _HTTP_CHARSET_RE.search(content_type)
    return m.group(1) if m else None


def charset_from_meta(data: bytes) -> str | None:
    """The charset declared by a ``<meta>`` tag in the first bytes of ``data``."""
    m = _META_RE.search(data[:META_SCAN_BYTES])
    if not m:
        return None
    return m.group(1).decode("ascii", "ignore")


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_html(data: bytes | str, content_type: str | None = None) -> Decoded:
    """Decode ``data`` like a browser would; never raises."""
    if isinstance(data, str):
        return Decoded(data, "str", "str", False)
    data = bytes(data)
    for bom, enc in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(enc, errors="replace")
            return Decoded(text, enc, "bom", "\ufffd" in text)

    declared = _declared(data, content_type)
    utf8 = _strict(data, "utf-8")
    for enc, source in declared:
        if utf8 is not None and enc != "utf-8" and _is_single_byte(enc) and not utf8.isascii():
            # valid multi-byte UTF-8 is next to impossible by chance in a single-byte
            # encoding: the declaration is wrong (a common server default).
            return Decoded(utf8, "utf-8", f"utf-8 (declared {enc} in {source})", False)
        text = utf8 if enc == "utf-8" else _strict(data, enc)
        if text is not None:
            return Decoded(text, enc, source, False)
    if utf8 is not None:
        return Decoded(utf8, "utf-8", "utf-8", False)

    detected = _detect(data)
    if detected:
        text = _strict(data, detected)
        if text is not None:
            return Decoded(text, detected, "detector", False)
    if declared:
        # nothing decodes cleanly: trust the first declaration, as a browser does
        enc, source = declared[0]
    elif detected:
        enc, source = detected, "detector"
    else:
        enc, source = "cp1252", "fallback"
    text = data.decode(enc, errors="replace")
    return Decoded(text, enc, source, True)


def _declared(data: bytes, content_type: str | None) -> list[tuple[str, str]]:
    """The charsets ``data`` declares, in order of evidence: (codec, "http" or "meta")."""
    declared: list[tuple[str, str]] = []
    http = normalize_charset(charset_from_content_type(content_type))
    if http:
        declared.append((http, "http"))
    meta = normalize_charset(charset_from_meta(data))
    if meta and meta not in ("utf-16-le", "utf-16-be"):  # a <meta> read as ASCII cannot be UTF-16
        declared.append((meta, "meta"))
    return declared


def utf8_source(data: bytes, content_type: str | None, is_ascii: bool) -> str | None:
    """``decode_html(data, content_type).source`` when ``data`` (no byte-order mark; valid UTF-8,
    ``is_ascii`` when all ASCII: checked by the caller without decoding) is decoded as UTF-8 by
    it; None when :func:`decode_html` would try another encoding first (the caller then calls it).
    The same evidence in the same order as :func:`decode_html`'s."""
    declared = _declared(data, content_type)
    if not declared:
        return "utf-8"
    enc, source = declared[0]
    if enc == "utf-8":
        return source
    if _is_single_byte(enc) and not is_ascii:
        return f"utf-8 (declared {enc} in {source})"
    return None


@functools.lru_cache(maxsize=64)
def _is_single_byte(encoding: str) -> bool:
    """True for encodings that map every byte to one character (windows-125x, ISO-8859-x, KOI8)."""
    try:
        return len(bytes(range(0x80, 0x100)).decode(encoding, errors="replace")) == 128
    except LookupError:
        return False


def _detect(data: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - dependency is declared
        return None
    try:
        best = from_bytes(data[:DETECTOR_BYTES]).best()
    except Exception:  # the detector must never take a page down
        return None
    if best is None:
        return None
    return normalize_charset(best.encoding)
