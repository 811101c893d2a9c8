"""User-supplied URL blocklists (``--url-blocklist FILE...``); nothing is bundled or downloaded.

**File format.** UTF-8 text, one entry per line; blank lines and lines starting with ``#`` are
ignored; an entry may carry a kind prefix:

* ``domain:example.com`` (or a bare ``example.com``): blocks the host ``example.com`` and every
  host under it (``news.example.com``, ``a.b.example.com``), not ``notexample.com``; matched on
  the URL's host and each of its parent domains, case-insensitive, without a trailing dot or port;
* ``url:https://example.com/page`` (or a bare entry holding ``://``): blocks that exact URL;
* ``word:casino``: blocks URLs having that word, where the URL's words are its runs of ASCII
  letters and digits, lower-cased (``https://x.com/best-casino-2024`` has ``best``, ``casino``,
  ``2024``);
* ``subword:casino``: blocks URLs whose letters and digits, lower-cased and run together
  (``httpsxcombestcasino2024``), contain it.

This is datatrove's ``URLFilter`` (``datatrove/pipeline/filters/url_filter.py``: block-listed
domains and sub-domains, URLs, banned words, banned sub-words) with the lists supplied by the
user and the URL's words lower-cased.  The rules, in order, are the report's sub-rules
``url.domain``, ``url.url``, ``url.word``, ``url.subword``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import UserError

KINDS = ("domain", "url", "word", "subword")
_PREFIX = re.compile(r"^(domain|url|word|subword):(.*)$", re.IGNORECASE)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_HOST = r"^[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(?P<host>\[[^\]/]*\]|[^:/?#]*)"


@dataclass(frozen=True)
class UrlBlocklist:
    """The entries of one or more blocklist files, by kind."""

    domains: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    subwords: frozenset[str] = frozenset()
    sources: tuple[str, ...] = ()

    @classmethod
    def load(cls, paths: Sequence[str]) -> UrlBlocklist:
        """Read the files (a missing or unreadable file, or an entry of an unknown kind, is a
        :class:`~contentx_udf.errors.UserError`)."""
        entries: dict[str, set[str]] = {kind: set() for kind in KINDS}
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except FileNotFoundError:
                raise UserError(f"--url-blocklist: no such file {path}") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise UserError(f"--url-blocklist: cannot read {path}: {exc}") from None
            for number, raw in enumerate(lines, 1):
                kind, value = parse_entry(raw)
                if kind is None:
                    continue
                if not value:
                    raise UserError(f"{path}:{number}: empty {kind} entry")
                entries[kind].add(value)
        return cls(
            domains=frozenset(entries["domain"]),
            urls=frozenset(entries["url"]),
            words=frozenset(entries["word"]),
            subwords=frozenset(entries["subword"]),
            sources=tuple(str(p) for p in paths),
        )

    def summary(self) -> dict[str, object]:
        return {
            "files": list(self.sources),
            "domains": len(self.domains),
            "urls": len(self.urls),
            "words": len(self.words),
            "subwords": len(self.subwords),
        }

    def match(self, urls: pa.Array) -> list[str | None]:
        """Per URL: the first rule it fails (``domain``, ``url``, ``word``, ``subword``) or None;
        a null URL passes."""
        urls = pc.fill_null(urls.cast(pa.large_string()), "")
        n = len(urls)
        codes = np.zeros(n, np.int8)

        def fail(kind: str, mask: np.ndarray) -> None:
            codes[(codes == 0) & mask] = KINDS.index(kind) + 1

        if self.domains:
            fail("domain", self._domain_hits(urls))
        if self.urls:
            fail("url", _bools(pc.is_in(urls, value_set=pa.array(sorted(self.urls), pa.large_string()))))
        if self.words:
            lowered = pc.utf8_lower(urls)
            parts = pc.split_pattern_regex(lowered, "[^a-z0-9]+")
            offsets = parts.offsets.to_numpy().astype(np.int64)
            hit = _bools(pc.is_in(parts.flatten(), value_set=pa.array(sorted(self.words), pa.large_string())))
            doc = np.repeat(np.arange(n), np.diff(offsets))
            fail("word", np.bincount(doc[hit], minlength=n) > 0)
        if self.subwords:
            squashed = pc.replace_substring_regex(pc.utf8_lower(urls), "[^a-z0-9]+", "")
            pattern = "|".join(re.escape(w) for w in sorted(self.subwords, key=len, reverse=True))
            fail("subword", _bools(pc.match_substring_regex(squashed, pattern)))
        names = (None, *KINDS)
        return [names[c] for c in codes.tolist()]

    def _domain_hits(self, urls: pa.Array) -> np.ndarray:
        """Per URL: its host or one of its parent domains is listed."""
        host = pc.struct_field(pc.extract_regex(urls, _HOST), [0])
        host = pc.utf8_rtrim(pc.utf8_lower(pc.fill_null(host, "")), characters=".")
        listed = pa.array(sorted(self.domains), pa.large_string())
        hits = np.zeros(len(urls), bool)
        while True:
            present = _bools(pc.not_equal(host, ""))
            if not present.any():
                return hits
            hits |= present & _bools(pc.is_in(host, value_set=listed))
            # the parent domain: drop the first label (a host without a dot has none)
            dotted = _bools(pc.greater_equal(pc.find_substring(host, "."), 0))
            parent = pc.replace_substring_regex(host, r"^[^.]*\.", "", max_replacements=1)
            host = pc.if_else(pa.array(dotted), parent, "")


def parse_entry(raw: str) -> tuple[str | None, str]:
    """``(kind, value)`` of one line of a blocklist file; ``(None, "")`` for a blank line or comment."""
    line = raw.strip()
    if not line or line.startswith("#"):
        return None, ""
    prefixed = _PREFIX.match(line)
    if prefixed and not prefixed.group(2).startswith("//"):
        kind, value = prefixed.group(1).lower(), prefixed.group(2).strip()
    elif "://" in line:
        kind, value = "url", line
    else:
        kind, value = "domain", line
    if kind == "domain":
        value = value.lower().rstrip(".")
    elif kind in ("word", "subword"):
        value = _NON_ALNUM.sub("", value.lower())
    return kind, value


def _bools(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)
