"""Opt-in masking of e-mail addresses and public IP addresses (``--mask-pii``).

As datatrove's ``PIIFormatter`` (``datatrove/pipeline/formatters/pii.py``), with one fixed
replacement address per kind instead of its rotating list of look-alike addresses:

* an e-mail address (datatrove's pattern: a local part, ``@``, a domain of dotted labels or a
  bracketed address) becomes :data:`EMAIL_MASK` ``email@example.com`` (example.com is
  reserved for examples);
* an IPv4 address (four dotted numbers 0-255) or an IPv6 address (colon-separated hex groups,
  ``::`` shortening included) becomes :data:`IPV4_MASK` ``0.0.0.0`` or
  :data:`IPV6_MASK` ``::`` when ``ipaddress`` calls it global (``is_global``): private
  (10/8, 172.16/12, 192.168/16, fc00::/7), loopback (127/8, ::1), link-local (169.254/16,
  fe80::/10), documentation and other reserved addresses are kept;
* not masked (unlike datatrove): dotted numbers that are part of a longer dotted run
  (``1.2.3.4.5``) or glued to letters or digits (``v1.2.3.4``, ``1.2.3.4b``), and a
  four-part number right after the word "version" or "ver." (``version 1.2.3.4``): these are
  version numbers.  Dates never have four dotted parts.

The replacements are not global addresses, so masking a masked text changes nothing.  Counts
per document are returned for the report.
"""

from __future__ import annotations

import ipaddress
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...text.arrays import as_strings, count_literal, replace_at

EMAIL_MASK = "email@example.com"
IPV4_MASK = "0.0.0.0"
IPV6_MASK = "::"

#: datatrove's e-mail pattern (RE2 and Python ``re`` read it alike).
EMAIL = (
    r"\b[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:(?:[A-Za-z0-9](?:["
    r"A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_IPV4 = re.compile(
    r"(?<![\w.])(?<!version )(?<!Version )(?<!VERSION )(?<!ver\. )(?<!Ver\. )"
    rf"{_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.\d)"
)
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:]|\.\w)"
)
#: Cheap RE2 pre-checks: only texts that match are read in Python.
_MAYBE_IPV4 = r"\d\.\d{1,3}\.\d{1,3}\.\d"
_MAYBE_IPV6 = r"[0-9A-Fa-f]:[0-9A-Fa-f:]*:|::"


def _is_public(candidate: str) -> bool:
    try:
        return ipaddress.ip_address(candidate).is_global
    except ValueError:
        return False


def _mask_ips(text: str) -> tuple[str, int, int]:
    counts = [0, 0]

    def mask(match: re.Match, replacement: str, slot: int) -> str:
        """``replacement`` for a public address (counted in ``counts[slot]``), else the match."""
        if not _is_public(match.group(0)):
            return match.group(0)
        counts[slot] += 1
        return replacement

    text = _IPV4.sub(lambda m: mask(m, IPV4_MASK, 0), text)
    if "::" in text or text.count(":") >= 2:
        text = _IPV6.sub(lambda m: mask(m, IPV6_MASK, 1), text)
    return text, counts[0], counts[1]


def mask_pii(texts) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """``(masked texts, e-mails masked, IP addresses masked)`` per text (IPv4 and IPv6 together).

    E-mails are replaced in one RE2 pass over the batch; the few texts with something that
    looks like an IP address are checked address by address with :mod:`ipaddress`."""
    texts = as_strings(texts)
    n = len(texts)
    found = pc.count_substring_regex(texts, EMAIL).to_numpy(zero_copy_only=False).astype(np.int64)
    already = count_literal(texts, EMAIL_MASK)
    emails = np.maximum(found - already, 0)
    if found.any():
        texts = pc.replace_substring_regex(texts, EMAIL, EMAIL_MASK)
    ips = np.zeros(n, np.int64)
    maybe = pc.or_(
        pc.match_substring_regex(texts, _MAYBE_IPV4), pc.match_substring_regex(texts, _MAYBE_IPV6)
    ).to_numpy(zero_copy_only=False)
    candidates = np.flatnonzero(maybe)
    if len(candidates):
        values = texts.take(candidates).to_pylist()
        for j, i in enumerate(candidates.tolist()):
            values[j], v4, v6 = _mask_ips(values[j])
            ips[i] = v4 + v6
        if ips.any():
            texts = replace_at(texts, candidates, pa.array(values, pa.large_string()))
    return texts, emails, ips
