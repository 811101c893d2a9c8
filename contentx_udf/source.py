"""The source view of a page: the cleaned ``<body>`` re-serialised as HTML, as numpy arrays.

Lexbor's serialiser writes every tag on one line and escapes ``<`` in text, so two C-level
regex passes (split and findall) find every tag; per-character arrays (code points, tag
mask) are then built with numpy.  Used by the source-based methods: CETR works on lines,
CCB on characters and tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .tags import BLOCK_TAGS

_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
#: A tag of the serialised body: "<" then a name or "/" + name, up to the next ">".
_TAG_SPLIT_RE = re.compile(r"(</?[A-Za-z][^>]*>)")
_TAG_NAME_RE = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*>")


@dataclass
class SourceArrays:
    """The cleaned ``<body>`` as HTML source text, with per-character arrays.

    ``codes[i]`` is the code point of character ``i`` of :attr:`html`; ``is_tag[i]`` tells
    whether it belongs to a tag.  ``tag_start``/``tag_end`` are the character spans of the
    tags, ``tag_name`` their lower-case names and ``tag_closing`` whether they are end tags.
    Entities stay escaped in :attr:`html` (``&amp;`` is five characters); :meth:`text_of`
    unescapes them in the output.
    """

    html: str
    codes: np.ndarray
    is_tag: np.ndarray
    tag_start: np.ndarray
    tag_end: np.ndarray
    tag_name: list[str]
    tag_closing: np.ndarray

    @classmethod
    def from_html(cls, body_html: str) -> SourceArrays:
        # comments are dropped from the source; then "<" only opens tags (Lexbor escapes it in text)
        html = _COMMENT_RE.sub("", body_html) if "<!--" in body_html else body_html
        parts = _TAG_SPLIT_RE.split(html)  # text, tag, text, tag, ..., text
        lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        starts = np.zeros(len(parts), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        t_start = starts[1::2]
        t_end = t_start + lengths[1::2]
        part_is_tag = np.zeros(len(parts), dtype=bool)
        part_is_tag[1::2] = True
        is_tag = np.repeat(part_is_tag, lengths)
        found = _TAG_NAME_RE.findall(html)  # same matches as the split, in order
        names = [name.lower() for _slash, name in found]
        closing = np.fromiter((slash == "/" for slash, _name in found), dtype=bool, count=len(found))
        codes = np.frombuffer(html.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        return cls(
            html=html,
            codes=codes,
            is_tag=is_tag,
            tag_start=t_start,
            tag_end=t_end,
            tag_name=names,
            tag_closing=closing,
        )

    @property
    def size(self) -> int:
        return len(self.html)

    @cached_property
    def tag_is_block(self) -> np.ndarray:
        return np.fromiter((n in BLOCK_TAGS for n in self.tag_name), dtype=bool, count=len(self.tag_name))

    def tag_mask(self, names) -> np.ndarray:
        """Boolean mask over tags whose name is in ``names``."""
        names = set(names)
        return np.fromiter((n in names for n in self.tag_name), dtype=bool, count=len(self.tag_name))

    def inside(self, names) -> np.ndarray:
        """Per-character mask: the character lies inside an element named in ``names``
        (between its start and end tag, the tags included)."""
        sel = self.tag_mask(names)
        delta = np.zeros(self.size + 1, dtype=np.int64)
        opening = sel & ~self.tag_closing
        closing = sel & self.tag_closing
        np.add.at(delta, self.tag_start[opening], 1)
        np.add.at(delta, self.tag_end[closing], -1)
        return np.cumsum(delta[:-1]) > 0

    def text_of(self, char_mask: np.ndarray) -> str:
        """Text of the selected non-tag characters; block tags become line breaks."""
        keep = char_mask & ~self.is_tag
        if not keep.any():
            return ""
        out = self.codes.copy()
        block_starts = self.tag_start[self.tag_is_block]
        out[block_starts] = 10  # "\n"
        keep = keep.copy()
        keep[block_starts] = True
        text = out[keep].tobytes().decode("utf-32-le", "replace")
        text = _unescape(text)
        lines = (" ".join(line.split()) for line in text.split("\n"))
        return "\n".join(line for line in lines if line)

    @cached_property
    def full_text(self) -> str:
        return self.text_of(np.ones(self.size, dtype=bool))


def _unescape(text: str) -> str:
    if "&" not in text:
        return text
    import html as _html

    return _html.unescape(text)
