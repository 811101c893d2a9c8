"""Two page-level signals of the ``combined`` method's features (:mod:`.block_features`): the
page's JSON-LD ``@type`` values (:func:`jsonld_types`) and, per block, how many of the title's
words it holds (:func:`title_hits`); each a compiled pass (:mod:`..page.compiled`) with its
Python reference beside it."""

from __future__ import annotations

import re
from operator import methodcaller

import numpy as np

from ..page import compiled

_JSONLD_KEY = '"@type"'
_JSONLD_KEY_BYTES = _JSONLD_KEY.encode()
_JSONLD_KEY_TAIL = _JSONLD_KEY[1:]
_JSONLD_RE = re.compile(r'"@type"\s*:\s*\[?\s*"(?:https?://schema\.org/)?([A-Za-z]+)"')
#: ``_JSONLD_RE`` on UTF-8 bytes: ``\s`` spelled out as the UTF-8 encodings of the characters
#: ``str`` patterns take for whitespace (``str.isspace``), so that both match the same text.
_UNICODE_SPACE = (
    rb"(?:[\t\n\v\f\r\x1c-\x1f ]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80)*"
)
_JSONLD_BYTES_RE = re.compile(
    rb'"@type"' + _UNICODE_SPACE + rb":" + _UNICODE_SPACE + rb"\[?" + _UNICODE_SPACE
    + rb'"(?:https?://schema\.org/)?([A-Za-z]+)"'
)  # fmt: skip
_MATCH_START = methodcaller("start")


def _is_word_char(char: str) -> bool:
    """Whether ``char`` is a regex ``\\w`` character (alphanumeric or "_")."""
    return char.isalnum() or char == "_"


def jsonld_types(html: str | None, utf8: bytes | None = None) -> set[str]:
    """The JSON-LD ``@type`` values of the page (lower case): what ``_JSONLD_RE.findall`` finds,
    the regex tried only where ``str.find`` finds its literal start (a regex scan of a whole page
    costs far more).  ``utf8``: ``html`` in UTF-8, where the regex's bytes form is tried at every
    place of the literal that the compiled ``find_all`` finds (no ``str`` search: most pages' ``str``
    is UCS-2 or UCS-4, where ``str.find`` is slow)."""
    found: set[str] = set()
    fast = compiled.module()
    if utf8 is not None and fast is not None:  # the regex tried at every place of the literal
        after = 0
        for at in fast.find_all(utf8, _JSONLD_KEY_BYTES, 1):  # (memchr for its rare "@")
            if at < after:
                continue  # (inside the previous match, as the search below goes on after it)
            match = _JSONLD_BYTES_RE.match(utf8, at)
            if match is not None:
                found.add(match.group(1).decode("ascii").lower())
                after = match.end()
        return found
    if html is None:  # (``Document.decoded_html`` of a page not decoded)
        html = utf8.decode("utf-8") if utf8 is not None else ""
    at = _next_jsonld_key(html, 0)
    while at >= 0:
        match = _JSONLD_RE.match(html, at)
        if match is None:
            at = _next_jsonld_key(html, at + 1)
        else:
            found.add(match.group(1).lower())
            at = _next_jsonld_key(html, match.end())
    return found


def _next_jsonld_key(html: str, start: int) -> int:
    """``html.find('"@type"', start)``, found through its tail '@type"' (``str.find`` looks
    first for a needle's first character, and '"' is everywhere in HTML)."""
    at = html.find(_JSONLD_KEY_TAIL, start + 1)
    while at >= 0 and html[at - 1] != '"':
        at = html.find(_JSONLD_KEY_TAIL, at + 1)
    return at - 1 if at >= 0 else -1


def title_hits(texts: list[str], title_words: set[str]) -> np.ndarray:
    """For each of ``texts`` (lower case), how many of its ``\\w+`` tokens are among
    ``title_words``: one compiled pass, or one regex pass over the texts joined by newlines."""
    fast = compiled.module()
    if fast is not None:
        return fast.word_hits(texts, title_words)
    # the title's words as whole \w+ tokens: a word matches only where no word character touches
    # it (the longest first).  The regex checks the end; the start is checked on its matches (a
    # match starting inside a token ends with it, so it hides no other), as a leading lookbehind
    # costs the regex its fast scan
    pattern = re.compile(
        r"(?:" + "|".join(map(re.escape, sorted(title_words, key=len, reverse=True))) + r")(?!\w)"
    )
    joined = "\n".join(texts)
    hits = [
        at
        for at in map(_MATCH_START, pattern.finditer(joined))
        if not at or not _is_word_char(joined[at - 1])
    ]
    if not hits:
        return np.zeros(len(texts), dtype=np.int64)
    block_ends = np.add.accumulate(np.fromiter(map(len, texts), np.int64, len(texts)) + 1)
    return np.bincount(block_ends.searchsorted(hits, side="right"), minlength=len(texts))
