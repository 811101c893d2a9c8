"""The source view of a page: the cleaned ``<body>`` re-serialised as HTML, as numpy arrays.

Lexbor's serialiser writes every tag on one line and escapes ``<`` and ``>`` in text, so
the tags are found with numpy on the code points: a tag opens at a ``<`` followed by a
letter (or ``/`` and a letter) and closes at the next ``>`` (the regex
``</?[A-Za-z][^>]*>`` scanned left to right).  Tag names are classified by numeric keys
(no string per tag); the name strings, the tag mask and the text between the tags are
built on first use.  CCB reads the per-character arrays, CETR the text between the tags
(:attr:`SourceArrays.text_codes`) and line spans (:meth:`SourceArrays.text_of_spans`).
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .tags import BLOCK_TAGS

#: ``<!--.*?-->`` (DOTALL) written with possessive loops: the characters between "-" run
#: through a class loop instead of trying "-->" at every position (same matches).
_COMMENT_RE = re.compile(r"<!--[^-]*+(?:-(?!->)[^-]*+)*+-->")
#: A tag name as the regex reading has it: up to whitespace, "/" or ">".
_NAME_RE = re.compile(r"[^\s/>]*")
#: Memo key: :meth:`SourceArrays._block_tags` named a range of tags already.
_ASKED_BLOCKS = ("source", "block tags of a range")

_AMP, _NEWLINE, _SPACE, _SLASH, _LT, _GT = 38, 10, 32, 47, 60, 62
#: Code points that ``str.isspace`` accepts (``str.split()`` and ``str.strip()`` split and strip
#: at these, and so does the regex ``\s``); tests/test_cetr.py checks the list.
SPACE_CODE_POINTS = (
    (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680)
    + tuple(range(0x2000, 0x200B))
    + (0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
)

#: Tag names of up to _KEY_CHARS ASCII letters and digits get a numeric key: digit
#: ``ord(c) - 47`` (1-10 for "0"-"9", 50-75 for "a"-"z") at base 76, least significant first.
_KEY_CHARS = 10
_KEY_POWERS = 76 ** np.arange(_KEY_CHARS + 1, dtype=np.int64)  # (76**10 < 2**63)
_KEY_ROWS = np.arange(_KEY_CHARS + 1)[:, None]
_NO_KEY = -1


def name_key(name: str) -> int:
    """The numeric key of a lower-case tag name, or -1 when it has none."""
    if not (0 < len(name) <= _KEY_CHARS and name.isascii() and name.isalnum() and name == name.lower()):
        return _NO_KEY
    return int(sum((ord(c) - 47) * int(p) for c, p in zip(name, _KEY_POWERS, strict=False)))


_SHORT_NAME = 6  # most tag names are no longer


#: For 16-bit code points: the key digit of a name character (0: not an ASCII letter or
#: digit), and whether a character may end a name (the serialiser writes " ", ">" or "/").
_KEY_DIGIT = np.zeros(1 << 16, dtype=np.uint8)
for _c in b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _KEY_DIGIT[_c] = (_c | 32) - 47
_NAME_STOP = np.zeros(1 << 16, dtype=bool)
_NAME_STOP[[_SPACE, _GT, _SLASH]] = True


def _name_keys(codes: np.ndarray, name_start: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Length and key of the names starting at ``name_start`` when they are ASCII letters and
    digits ending at whitespace, "/" or ">" within ``width`` characters; else length -1."""
    rows = _KEY_ROWS[:width]
    window = codes.take(rows + name_start, mode="clip")  # one row per position: long rows
    if window.dtype == np.uint16:  # look-up tables instead of the arithmetic below
        digit = _KEY_DIGIT.take(window)
        length = digit.astype(bool).argmin(axis=0)  # the first character that is no digit
        stop = window[length, np.arange(name_start.size)]
        digit[rows >= length] = 0
        key = _KEY_POWERS[:width] @ digit
        length[~_NAME_STOP.take(stop)] = -1
        return length, key
    folded = window | 32  # letters to lower case; digits stay
    plain = (folded - 97) <= 25  # a letter (unsigned: below "a" wraps to the top) ...
    plain |= (window - 48) <= 9  # ... or a digit
    length = plain.argmin(axis=0)  # the first character that is neither (0: none is)
    stop = window[length, np.arange(name_start.size)]
    # the name ends at whitespace, "/" or ">" (the serialiser writes " " or ">" there)
    plainly = (stop == _SPACE) | (stop == _GT) | (stop == _SLASH)
    folded -= 47
    folded[rows >= length] = 0
    key = _KEY_POWERS[:width] @ folded
    length[~plainly] = -1
    return length, key


def _is_block(key: np.ndarray) -> np.ndarray:
    """Whether each name key is that of a block tag."""
    return _BLOCK_KEYS[np.minimum(_BLOCK_KEYS.searchsorted(key), _BLOCK_KEYS.size - 1)] == key


_BLOCK_KEYS = np.array(sorted(name_key(n) for n in BLOCK_TAGS), dtype=np.int64)
if _NO_KEY in _BLOCK_KEYS:  # every block tag name is short ASCII: tags.py would have to change
    raise RuntimeError("a block tag name without a numeric key")

#: The four escapes Lexbor writes in text, as code points, and the character each stands for.
_ESCAPES = (("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&nbsp;", "\xa0"))
_ESCAPE_CODES = np.zeros((len(_ESCAPES), 6), dtype=np.uint32)
for _row, (_escape, _char) in enumerate(_ESCAPES):
    _ESCAPE_CODES[_row, : len(_escape)] = [ord(c) for c in _escape]
_ESCAPE_LEN = np.array([len(e) for e, _c in _ESCAPES], dtype=np.int64)
_ESCAPE_CHAR = np.array([ord(c) for _e, c in _ESCAPES], dtype=np.uint32)
_ESCAPE_POS = np.arange(6)
_ESCAPE_USED = _ESCAPE_POS[None, :] < _ESCAPE_LEN[:, None]
_ESCAPE_TAIL = np.arange(1, 6)


def _utf32(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def code_points(text: str) -> np.ndarray:
    """The code points of ``text``: ``uint16`` when they all fit (no character beyond the Basic
    Multilingual Plane: half the memory to scan), else ``uint32``."""
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) == 2 * len(text):
        return np.frombuffer(units, dtype=np.uint16)
    return _utf32(text)


def _as_text(codes: np.ndarray) -> str:
    return codes.astype(np.uint32, copy=False).tobytes().decode("utf-32-le", "replace")


@dataclass
class SourceArrays:
    """The cleaned ``<body>`` as HTML source text, with per-character and per-tag arrays.

    ``codes[i]`` is the code point of character ``i`` of :attr:`html`.  ``tag_start`` /
    ``tag_end`` are the character spans of the tags, ``tag_closing`` whether they are end
    tags; on demand ``tag_name`` holds their lower-case names, ``is_tag[i]`` tells whether
    character ``i`` belongs to a tag and :attr:`text_codes` are the code points outside the
    tags.  Entities stay escaped in :attr:`html` (``&amp;`` is five characters);
    :meth:`text_of` unescapes them in the output.  :attr:`memo` holds statistics that several
    methods of one page share (CETR's lines, keyed by their parameters).
    """

    html: str
    codes: np.ndarray
    tag_start: np.ndarray
    tag_end: np.ndarray
    tag_closing: np.ndarray
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_html(cls, body_html: str) -> SourceArrays:
        # comments are dropped from the source; then "<" only opens tags (Lexbor escapes it in text)
        html = _COMMENT_RE.sub("", body_html) if "<!--" in body_html else body_html
        codes = code_points(html)
        lt = (codes == _LT).nonzero()[0]
        gt = (codes == _GT).nonzero()[0]
        z = np.zeros(0, dtype=np.int64)
        if lt.size == 0 or gt.size == 0:
            return cls(html=html, codes=codes, tag_start=z, tag_end=z, tag_closing=np.zeros(0, dtype=bool))
        # "<" or "</" then a letter (clipped at the end: "<" or "/" again, no letter)
        closing = codes.take(lt + 1, mode="clip") == _SLASH
        first = codes.take(lt + 1 + closing, mode="clip")
        opens = ((first | 32) - 97) <= 25  # a letter (unsigned: below "a" wraps to the top)
        lt, closing = lt[opens], closing[opens]
        # a tag runs to the next ">"; a "<" before that ">" lies inside the tag
        end = gt.searchsorted(lt)
        start = np.ones(lt.size, dtype=bool)
        np.not_equal(end[1:], end[:-1], out=start[1:])
        start &= end < gt.size  # no ">" left: no tag
        return cls(
            html=html,
            codes=codes,
            tag_start=lt[start],
            tag_end=gt[end[start]] + 1,
            tag_closing=closing[start],
        )

    @property
    def size(self) -> int:
        return len(self.html)

    # --- tags ----------------------------------------------------------------------------------

    @cached_property
    def _names(self) -> tuple[np.ndarray, np.ndarray]:
        """(end of each tag's name, numeric key of the lower-case name or -1)."""
        return self._names_of(0, self.tag_start.size)

    def _names_of(self, first: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """:attr:`_names` of the tags ``first:stop``."""
        name_start = self.tag_start[first:stop] + 1 + self.tag_closing[first:stop]
        # most names are short: a narrow window first, the full one for the names that fill it
        length, key = _name_keys(self.codes, name_start, _SHORT_NAME + 1)
        longer = (length < 0).nonzero()[0]
        if longer.size:
            length[longer], key[longer] = _name_keys(self.codes, name_start[longer], _KEY_CHARS + 1)
        name_end = name_start + length
        # anything else (a longer name, a non-ASCII character, "-", ...): the regex reading
        for i in (length < 0).nonzero()[0].tolist():
            s = int(name_start[i])
            name_end[i] = _NAME_RE.match(self.html, s).end()
            key[i] = name_key(self.html[s : int(name_end[i])].lower())
        return name_end, key

    @property
    def tag_name_end(self) -> np.ndarray:
        """End of each tag's name (the name starts after ``<`` or ``</``)."""
        return self._names[0]

    @property
    def tag_key(self) -> np.ndarray:
        """Numeric key of each tag's lower-case name (:func:`name_key`), -1 for names that
        have none (longer than 10 characters or not only ASCII letters and digits)."""
        return self._names[1]

    @cached_property
    def tag_name(self) -> list[str]:
        """Lower-case name of each tag."""
        html = self.html
        name_start = (self.tag_start + 1 + self.tag_closing).tolist()
        names = [html[s:e] for s, e in zip(name_start, self.tag_name_end.tolist(), strict=True)]
        joined = " ".join(names)  # names hold no whitespace
        lowered = joined.lower()
        return lowered.split(" ") if lowered != joined else names

    @cached_property
    def tag_is_block(self) -> np.ndarray:
        return _is_block(self.tag_key)

    def _block_tags(self, first: int, stop: int) -> np.ndarray:
        """:attr:`tag_is_block` of the tags ``first:stop``, without naming the other tags."""
        if "tag_is_block" in self.__dict__:
            return self.tag_is_block[first:stop]
        if "_names" in self.__dict__:
            return _is_block(self.tag_key[first:stop])
        if _ASKED_BLOCKS in self.memo:  # a second reading (extract_all): name every tag once
            return self.tag_is_block[first:stop]
        self.memo[_ASKED_BLOCKS] = True
        return _is_block(self._names_of(first, stop)[1])

    def tag_mask(self, names) -> np.ndarray:
        """Boolean mask over tags whose name is in ``names``."""
        names = set(names)
        keys = [name_key(n) for n in names]
        if _NO_KEY in keys:
            return np.fromiter(map(names.__contains__, self.tag_name), dtype=bool, count=len(self.tag_name))
        return np.isin(self.tag_key, np.array(keys, dtype=np.int64))

    @cached_property
    def tag_chars_before(self) -> np.ndarray:
        """``tag_chars_before[j]``: characters of the tags before tag ``j`` (one entry more
        than tags: the last counts every tag character)."""
        out = np.zeros(self.tag_start.size + 1, dtype=np.int64)
        (self.tag_end - self.tag_start).cumsum(out=out[1:])
        return out

    # --- the text between the tags --------------------------------------------------------

    @cached_property
    def is_tag(self) -> np.ndarray:
        lengths = np.empty(2 * self.tag_start.size + 1, dtype=np.int64)
        lengths[0::2] = self.text_lengths
        lengths[1::2] = self.tag_end - self.tag_start
        flags = np.zeros(lengths.size, dtype=bool)
        flags[1::2] = True
        return flags.repeat(lengths)

    @cached_property
    def text_codes(self) -> np.ndarray:
        """The code points outside the tags, in order (entities escaped)."""
        if self.tag_start.size == 0:
            return self.codes
        index = self.tag_chars_before.repeat(self.text_lengths)  # tag characters before each
        index += np.arange(index.size)
        return self.codes.take(index)

    @cached_property
    def text_part(self) -> np.ndarray:
        """For each character outside the tags, the number of tags before it (which of the texts
        between the tags it belongs to)."""
        return np.arange(self.tag_start.size + 1).repeat(self.text_lengths)

    @cached_property
    def text_offset(self) -> np.ndarray:
        """``text_offset[i]``: text characters before the ``i``-th text (the text before tag
        ``i``; the last one follows the last tag)."""
        out = np.zeros(self.tag_start.size + 1, dtype=np.int64)
        out[1:] = self.tag_end - self.tag_chars_before[1:]
        return out

    @cached_property
    def text_lengths(self) -> np.ndarray:
        """Length of each text between the tags (the first before tag 0, the last after the last
        tag)."""
        out = np.empty(self.tag_start.size + 1, dtype=np.int64)
        out[:-1] = self.tag_start
        out[-1] = self.size
        out[1:] -= self.tag_end
        return out

    @cached_property
    def non_space_chars(self) -> int:
        """Characters outside the tags that are not whitespace (``" \\n\\t\\r\\f\\v\\xa0"``)."""
        c = self.text_codes
        space = ((c - 9) <= 4) | (c == _SPACE) | (c == 0xA0)  # unsigned: below 9 wraps to the top
        return int(c.size - np.count_nonzero(space))

    def text_position(self, pos: np.ndarray) -> np.ndarray:
        """Text characters (outside tags) before each source position of ``pos``."""
        pos = np.asarray(pos, dtype=np.int64)
        k = self.tag_start.searchsorted(pos, side="left")  # tags starting before pos
        inside = self._tag_end_before[k] > pos  # inside a tag: the text before that tag
        return np.where(inside, self.text_offset[k], pos - self.tag_chars_before[k])

    @cached_property
    def _tag_end_before(self) -> np.ndarray:
        """``_tag_end_before[j]``: end of tag ``j - 1`` (0 for ``j = 0``)."""
        return np.concatenate(([0], self.tag_end))

    def source_position(self, text_pos: np.ndarray) -> np.ndarray:
        """Source position of each text character ``text_pos`` (an index into
        :attr:`text_codes`)."""
        text_pos = np.asarray(text_pos, dtype=np.int64)
        return text_pos + self.tag_chars_before[self.text_part[text_pos]]

    # --- output text --------------------------------------------------------------------------

    @cached_property
    def block_codes(self) -> np.ndarray:
        """:attr:`text_codes` with a line break where each block tag starts."""
        return _with_breaks(self.text_codes, self.text_offset[self.tag_is_block.nonzero()[0] + 1])

    @cached_property
    def block_text(self) -> str:
        """:attr:`block_codes` as a string."""
        return _as_text(self.block_codes)

    def block_text_between(self, start: int, stop: int) -> tuple[str, np.ndarray]:
        """The text characters ``start:stop`` with a line break where each block tag strictly
        inside the stretch starts (the stretch of :attr:`block_text` from character ``start``
        to character ``stop - 1``), and the text positions of those block tags.  Only the tags
        inside are named (:meth:`_block_tags`)."""
        tag_pos = self.text_offset[1:]
        first = int(tag_pos.searchsorted(start, side="right"))
        stop_tag = int(tag_pos.searchsorted(stop, side="left"))
        at = tag_pos[first:stop_tag][self._block_tags(first, stop_tag)]
        return _as_text(_with_breaks(self.text_codes[start:stop], at - start)), at

    def text_of(self, char_mask: np.ndarray) -> str:
        """Text of the selected non-tag characters; block tags become line breaks."""
        keep = char_mask & ~self.is_tag
        if not keep.any():
            return ""
        out = self.codes.copy()
        block_starts = self.tag_start[self.tag_is_block]
        out[block_starts] = _NEWLINE
        keep[block_starts] = True
        return clean_text(out[keep])

    def text_of_spans(self, starts: np.ndarray, ends: np.ndarray) -> str:
        """:meth:`text_of` the characters of the spans ``starts[i]:ends[i]``: sorted, disjoint,
        and no span end strictly inside a tag (where a tag starts is fine).

        Only the tags from the first span to the last are looked at (block tags before or
        after them would only add leading or trailing line breaks)."""
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        if starts.size == 0:
            return ""
        gap = (starts[1:] != ends[:-1]).nonzero()[0]  # merge spans that touch
        run_start = np.concatenate((starts[:1], starts[1:][gap]))
        run_end = np.concatenate((ends[:-1][gap], ends[-1:]))
        k_start = self.tag_start.searchsorted(run_start, side="left")  # tags before
        k_end = self.tag_start.searchsorted(run_end, side="left")
        first, stop = int(k_start[0]), int(k_end[-1])
        block = self._block_tags(first, stop)
        blocks = np.zeros(stop - first + 1, dtype=np.int64)  # block tags of the range before tag k
        block.cumsum(out=blocks[1:])
        # the text of the range with a line break where each block tag starts
        text_start = run_start - self.tag_chars_before[k_start]
        text_end = run_end - self.tag_chars_before[k_end]
        base = int(text_start[0])
        text = self.text_codes[base : int(text_end[-1])]
        local = _with_breaks(text, self.text_offset[block.nonzero()[0] + first + 1] - base)
        # span positions in it: text characters and block tags before the position
        k_start -= first
        k_end -= first
        lo = (text_start - base + blocks[k_start]).tolist()
        hi = (text_end - base + blocks[k_end]).tolist()
        # every block tag between two runs still breaks the line (text_of keeps them all)
        sep = ["\n" if b else "" for b in (blocks[k_start[1:]] > blocks[k_end[:-1]]).tolist()]
        sep.append("")
        local_text = _as_text(local)
        return clean_string(
            "".join([piece for a, b, s in zip(lo, hi, sep, strict=True) for piece in (local_text[a:b], s)])
        )

    @cached_property
    def full_text(self) -> str:
        return clean_text(self.block_codes)


def _with_breaks(text: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The code points ``text`` with a line break inserted before each of the sorted
    positions ``at`` (which this changes: callers pass a fresh array)."""
    at += np.arange(at.size)  # where each line break lands among the others
    out = np.empty(text.size + at.size, dtype=text.dtype)
    out[at] = _NEWLINE
    keep = np.ones(out.size, dtype=bool)
    keep[at] = False
    out[keep] = text
    return out


def clean_string(text: str) -> str:
    """``text`` with escapes undone (``html.unescape``), whitespace collapsed within each line
    and blank lines dropped.  Per line in Python: quicker than :func:`clean_text` for a text of
    few lines."""
    if "&" in text:
        text = _html.unescape(text)
    return "\n".join(filter(None, map(" ".join, map(str.split, text.split("\n")))))


def clean_text(codes: np.ndarray) -> str:
    """:func:`clean_string` of the code points ``codes``, with numpy: quicker for a text of
    many (blank) lines."""
    if codes.size == 0:
        return ""
    amp = (codes == _AMP).nonzero()[0]
    if amp.size:
        codes = _unescape_codes(codes, amp)
    solid = ~space_mask(codes)
    first = int(solid.argmax())
    if not solid[first]:
        return ""
    last = codes.size - int(solid[::-1].argmax())
    codes, solid = codes[first:last], solid[first:last]
    # a run of whitespace becomes its first character: a line break if the run holds one
    run_start = (solid[:-1] > solid[1:]).nonzero()[0] + 1
    if run_start.size:
        solid[run_start] = True  # solid is ours: the slice of a fresh array
        codes = codes.copy()
        newline = (codes == _NEWLINE).nonzero()[0]
        breaks = np.zeros(run_start.size, dtype=bool)
        breaks[run_start.searchsorted(newline, side="right") - 1] = True
        codes[run_start] = np.where(breaks, _NEWLINE, _SPACE)
    return _as_text(codes[solid])


def space_mask(codes: np.ndarray) -> np.ndarray:
    """``chr(c).isspace()`` for each code point of ``codes`` (comparisons, no table look-up)."""
    shifted = codes - 9  # unsigned: the codes below 9 wrap to the top
    is_space = shifted <= 4  # \t \n \v \f \r
    shifted -= 19
    is_space |= shifted <= 4  # \x1c - \x1f and " "
    high = (codes >= 0x85).nonzero()[0]
    if high.size:
        h = codes[high]
        hit = (h == 0xA0) | (h == 0x85) | (h == 0x3000) | ((h - 0x2000) <= 0x0A)
        hit |= (h == 0x1680) | ((h - 0x2028) <= 1) | (h == 0x202F) | (h == 0x205F)
        is_space[high] = hit
    return is_space


def _unescape_codes(codes: np.ndarray, amp: np.ndarray) -> np.ndarray:
    """``codes`` with its escapes undone.  Fast when every ``&`` starts one of the four escapes
    Lexbor writes in text; anything else goes through ``html.unescape``."""
    # (clipping repeats the last character, which completes no escape cut by the end)
    window = codes.take(amp[:, None] + _ESCAPE_POS, mode="clip")
    matches = ((window[:, None, :] == _ESCAPE_CODES[None, :, :]) | ~_ESCAPE_USED[None, :, :]).all(axis=2)
    kind = matches.argmax(axis=1)
    if not matches[np.arange(amp.size), kind].all():
        return _utf32(_html.unescape(_as_text(codes)))
    out = codes.copy()
    out[amp] = _ESCAPE_CHAR[kind]
    keep = np.ones(codes.size, dtype=bool)
    tail = amp[:, None] + _ESCAPE_TAIL  # the characters after "&" (escapes do not overlap)
    keep[tail[_ESCAPE_TAIL[None, :] < _ESCAPE_LEN[kind][:, None]]] = False
    return out[keep]
