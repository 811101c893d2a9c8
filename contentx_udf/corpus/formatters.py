"""FineWeb-2's final formatters, over a batch of texts (pure: pyarrow, numpy and ftfy; no Spark).

FineWeb-2 (``fineweb-2-pipeline.py``) ends with three datatrove formatters, run after its filters
and deduplication on the documents it writes: ``FTFYFormatter()``, ``PIIFormatter()`` (contentx's
``--mask-pii``) and ``SymbolLinesFormatter(symbols_to_remove=["|"], replace_char="\\n")``.  This
module gives the same output as the first and the third:

* **Encoding repair** (:func:`fix_encoding`): ``ftfy.fix_text`` with datatrove's configuration
  (:data:`FTFY_CONFIG`: mojibake, C1 controls, HTML entities outside HTML, terminal escapes and
  control characters; no quote uncurling, width or ligature folding, line-break or Unicode
  normalisation).  ftfy is pure Python (about 1.4 ms per web page), so it runs only on the texts
  that a vectorised pre-check (:func:`needs_ftfy`, one RE2 search per text in pyarrow) finds
  suspicious: a text the pre-check passes is one no configured fix of ftfy can act on
  (:func:`suspicious_pattern` says why, fix by fix).
* **Symbol lines** (:func:`symbol_lines`): a line made only of ``|`` and spaces (trafilatura's
  table separators) becomes a paragraph break, one for a run of such lines; as datatrove's
  formatter, the text is re-joined from ``str.splitlines()`` with ``\\n``, so other line
  separators become ``\\n`` and a final line break goes.  Only the texts holding ``|`` or a line
  separator other than an inner ``\\n`` (:func:`needs_symbol_lines`) are looked at in Python.

:func:`format_batch` applies both, in FineWeb-2's order, and says per text which changed it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..text.arrays import as_strings, replace_at
from ..text.language import text_hash

#: ``ftfy.TextFixerConfig`` arguments of datatrove's ``FTFYFormatter()`` (its defaults, as
#: FineWeb-2 calls it): repair the encoding, C1 controls, HTML entities (``auto``: not in a text
#: holding ``<``), terminal escapes, surrogates and control characters; nothing that enforces a
#: format (ligatures, widths, quotes, line breaks, normalisation).
FTFY_CONFIG = {
    "unescape_html": "auto",
    "remove_terminal_escapes": True,
    "fix_encoding": True,
    "restore_byte_a0": True,
    "replace_lossy_sequences": True,
    "decode_inconsistent_utf8": True,
    "fix_c1_controls": True,
    "fix_latin_ligatures": False,
    "fix_character_width": False,
    "uncurl_quotes": False,
    "fix_line_breaks": False,
    "fix_surrogates": True,
    "remove_control_chars": True,
    "normalization": None,
}
#: FineWeb-2's ``SymbolLinesFormatter`` arguments: lines of these symbols (and spaces) go, and a
#: run of them becomes this.
SYMBOLS = frozenset("|")
SYMBOL_REPLACEMENT = "\n"
#: Characters of an example of a change shown in the report (before and after).
EXAMPLE_CHARS = 160
#: What ``str.splitlines()`` splits at besides ``\n`` (a text holding one is re-joined with ``\n``).
LINE_SEPARATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@lru_cache(maxsize=1)
def ftfy_config():
    """The ``ftfy.TextFixerConfig`` of :data:`FTFY_CONFIG` (ftfy imported on first use)."""
    from ftfy import TextFixerConfig

    return TextFixerConfig(**FTFY_CONFIG)


def _re2_class_char(c: str) -> str:
    """One character of a character class, written for RE2 (``\\x{...}`` unless plain ASCII)."""
    if c.isascii() and (c.isalnum() or c in " -"):
        return c
    return f"\\x{{{ord(c):x}}}"


def badness_superset(pattern: str) -> str:
    """ftfy's ``BADNESS_RE`` (a Python ``re.VERBOSE`` pattern) as an RE2 pattern that matches
    wherever it matches, and maybe more: comments and layout whitespace go, class members are
    written as code points, and the context tokens RE2 reads otherwise (``\\s``, ``\\w``, ``.``,
    ``^`` and a ``?`` after them) are left out; leaving a token out of a sequence only widens it."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "[":
            j = i + 1
            members = []
            if pattern[j] == "^":
                members.append("^")
                j += 1
            while pattern[j] != "]" or j == i + 1:
                if pattern[j] == "\\":  # an escape inside a class: \xa0 and the like, kept as written
                    k = j + 2
                    if pattern[j + 1] == "x":
                        k = j + 4
                    members.append(pattern[j:k])
                    j = k
                else:
                    members.append(_re2_class_char(pattern[j]))
                    j += 1
            out.append("[" + "".join(members) + "]")
            i = j + 1
        elif c == "#":
            while i < n and pattern[i] != "\n":
                i += 1
        elif c.isspace():
            i += 1
        elif c == "\\" and pattern[i + 1] in "sw":
            i += 3 if i + 2 < n and pattern[i + 2] == "?" else 2
        elif c in ".^":
            i += 1
        elif c == "|":
            out.append("|")
            i += 1
        else:
            out.append(_re2_class_char(c))
            i += 1
    alternatives = [a for a in "".join(out).split("|") if a]
    return "|".join(f"(?:{a})" for a in alternatives)


@lru_cache(maxsize=1)
def suspicious_pattern() -> str:
    """The RE2 pattern of :func:`needs_ftfy`, derived from what each configured fix can act on:

    * ``fix_encoding`` changes nothing unless ftfy's ``badness.is_bad`` finds a sequence that is
      likely mojibake (its ``BADNESS_RE``, here widened to RE2 by :func:`badness_superset`); its
      sub-steps (``restore_byte_a0``, ``replace_lossy_sequences``, ``decode_inconsistent_utf8``,
      its C1 fix) run only then;
    * ``fix_c1_controls``: C1 control characters (U+0080-U+009F);
    * ``unescape_html``: an entity ``&name;`` or ``&#123;`` (its ``HTML_ENTITY_RE``), whether or
      not the text holds ``<`` (which switches it off: so more, never fewer);
    * ``remove_terminal_escapes``: ``ESC [``, and ``remove_control_chars``: the characters of its
      ``CONTROL_CHARS`` table (ESC among them);
    * ``fix_surrogates``: lone surrogates, which UTF-8 (an Arrow string) cannot hold.

    ftfy fixes a text line by line, repeating its fixes until none changes anything, so a text
    none of these finds in is returned unchanged; a match in one line is a match in the text."""
    from ftfy import badness, chardata

    controls = "".join(_re2_class_char(chr(c)) for c in sorted(chardata.CONTROL_CHARS))
    return "|".join(
        (
            badness_superset(badness.BADNESS_RE.pattern),
            r"[\x{80}-\x{9f}]",
            chardata.HTML_ENTITY_RE.pattern,
            f"[{controls}]",
        )
    )


#: Texts at least this long (characters) always go to ftfy: it cuts lines longer than its
#: ``max_decode_length`` (10^6) into pieces, whose first characters may meet context the text
#: does not have.
ALWAYS_FTFY_CHARS = 1_000_000


def needs_ftfy(texts: pa.Array) -> np.ndarray:
    """Per text: may ftfy with :data:`FTFY_CONFIG` change it?  False is a guarantee (see
    :func:`suspicious_pattern`); nulls are False."""
    texts = as_strings(texts)
    hit = pc.match_substring_regex(texts, suspicious_pattern())
    long = pc.greater_equal(pc.utf8_length(texts), ALWAYS_FTFY_CHARS)
    return pc.fill_null(pc.or_(hit, long), False).to_numpy(zero_copy_only=False)


def needs_symbol_lines(texts: pa.Array) -> np.ndarray:
    """Per text: may :func:`symbol_lines` change it?  Only a text holding a symbol, a line
    separator other than ``\\n``, or a final ``\\n`` can change; nulls are False."""
    texts = as_strings(texts)
    symbols = "".join(re.escape(s) for s in sorted(SYMBOLS))
    separators = "".join(_re2_class_char(c) for c in LINE_SEPARATORS)
    hit = pc.match_substring_regex(texts, f"[{symbols}{separators}]|\\n$")
    return pc.fill_null(hit, False).to_numpy(zero_copy_only=False)


def fix_text(text: str) -> str:
    """One text through ftfy with datatrove's configuration (what ``FTFYFormatter`` does)."""
    import ftfy

    return ftfy.fix_text(text, config=ftfy_config())


def fix_texts(texts: list[str]) -> list[str]:
    """:func:`fix_text` of each text, with ftfy run only on the lines the pre-check flags.

    ``ftfy.fix_text`` fixes a text one segment at a time (each line with its ``\n``; a line of
    more than ``max_decode_length`` characters in pieces), independently but for one state: from
    the first segment holding ``<`` on, HTML entities are no longer unescaped (``unescape_html``
    ``auto``).  So a segment the pre-check passes comes back unchanged, and the others are fixed
    here as ftfy would, each with that state: a web page whose one forum post is mojibake costs
    that post, not the page.  The lines of all texts are checked in one vectorised search."""
    import ftfy

    config = ftfy_config()
    no_html = config._replace(unescape_html=False)
    pieces = [text.split("\n") for text in texts]
    flagged = needs_ftfy(pa.array([p for ps in pieces for p in ps], pa.large_string()))
    out: list[str] = []
    start = 0
    for text, ps in zip(texts, pieces, strict=True):
        hits = np.flatnonzero(flagged[start : start + len(ps)]).tolist()
        start += len(ps)
        if len(text) >= ALWAYS_FTFY_CHARS:
            out.append(ftfy.fix_text(text, config=config))
            continue
        if not hits:
            out.append(text)
            continue
        segments = [p + "\n" for p in ps[:-1]] + [ps[-1]]  # ftfy's segments: each line with its \n
        ends = np.cumsum([len(seg) for seg in segments])
        first_tag = text.find("<")
        for i in hits:
            html_off = 0 <= first_tag < ends[i]  # a segment holding "<", or after one
            segments[i] = ftfy.fix_text(segments[i], config=no_html if html_off else config)
        out.append("".join(segments))
    return out


def symbol_lines(text: str) -> str:
    """datatrove's ``SymbolLinesFormatter.format`` with FineWeb-2's arguments: each run of lines
    made only of :data:`SYMBOLS` and spaces (not blank) becomes :data:`SYMBOL_REPLACEMENT`; lines
    as ``str.splitlines()`` gives them, joined with ``\\n``."""
    formatted: list[str] = []
    in_removed_span = False
    for line in text.splitlines():
        chars_line = line.strip() != "" and all(c in SYMBOLS or c == " " for c in line)
        if chars_line and not in_removed_span:
            formatted.append(SYMBOL_REPLACEMENT)
            in_removed_span = True
        elif not chars_line:
            formatted.append(line)
            in_removed_span = False
    return "\n".join(formatted)


@dataclass(frozen=True)
class FormatSettings:
    """Which final touches run: ``fix_encoding`` (ftfy) and ``symbol_lines``."""

    fix_encoding: bool = False
    symbol_lines: bool = False

    @property
    def active(self) -> bool:
        return self.fix_encoding or self.symbol_lines


#: The Arrow type :func:`format_batch` returns.
RESULT_TYPE = pa.struct(
    [
        ("text", pa.string()),  # the formatted text (the input when unchanged)
        ("text_hash", pa.string()),  # recomputed when the text changed, else null
        ("encoding_fixed", pa.bool_()),  # ftfy changed it
        ("symbol_lines", pa.bool_()),  # the symbol lines formatter changed it
        ("sent_to_ftfy", pa.bool_()),  # the pre-check sent it to ftfy
        ("example", pa.string()),  # "before → after" around the first change, when changed
    ]
)
RESULT_DDL = (
    "text string, text_hash string, encoding_fixed boolean, symbol_lines boolean, "
    "sent_to_ftfy boolean, example string"
)


def change_example(before: str, after: str, chars: int = EXAMPLE_CHARS) -> str:
    """A short ``before → after`` around the first character where two texts differ (reprs, so
    control characters and line breaks show)."""
    start = 0
    for start, (a, b) in enumerate(zip(before, after, strict=False)):  # noqa: B007
        if a != b:
            break
    else:
        start = min(len(before), len(after))
    lo = max(0, start - chars // 4)
    return f"{before[lo : lo + chars]!r} → {after[lo : lo + chars]!r}"


def _apply(texts: list[str], index: np.ndarray, fix) -> tuple[np.ndarray, list[str]]:
    """``fix`` over ``texts[i]`` for ``i`` in ``index``: which changed, and the new texts."""
    new = [fix(texts[i]) for i in index.tolist()]
    changed = np.array([n != texts[i] for n, i in zip(new, index.tolist(), strict=True)], dtype=bool)
    return changed, new


def format_batch(texts: pa.Array, settings: FormatSettings) -> pa.StructArray:
    """The final touches over a batch of texts (:data:`RESULT_TYPE`): ftfy on the texts
    :func:`needs_ftfy` sends it, then the symbol lines on those :func:`needs_symbol_lines` finds
    (on the repaired text); texts no step changed come back as they were, with a null hash."""
    texts = as_strings(texts)
    n = len(texts)
    current = texts
    encoding_fixed = np.zeros(n, dtype=bool)
    symbols_changed = np.zeros(n, dtype=bool)
    sent = np.zeros(n, dtype=bool)
    originals: dict[int, str] = {}
    if settings.fix_encoding:
        sent = needs_ftfy(current)
        index = np.flatnonzero(sent)
        if len(index):
            olds = current.take(pa.array(index)).to_pylist()
            new = fix_texts(olds)
            changed = np.array([a != b for a, b in zip(new, olds, strict=True)], dtype=bool)
            encoding_fixed[index] = changed
            originals.update((int(i), old) for i, old, c in zip(index, olds, changed, strict=True) if c)
            current = replace_at(
                current, index[changed], pa.array([t for t, c in zip(new, changed, strict=True) if c])
            )
    if settings.symbol_lines:
        index = np.flatnonzero(needs_symbol_lines(current))
        if len(index):
            olds = current.take(pa.array(index)).to_pylist()
            changed, new = _apply(olds, np.arange(len(index)), symbol_lines)
            symbols_changed[index] = changed
            for i, old, c in zip(index.tolist(), olds, changed.tolist(), strict=True):
                if c:
                    originals.setdefault(i, old)
            current = replace_at(
                current, index[changed], pa.array([t for t, c in zip(new, changed, strict=True) if c])
            )
    hashes: list[str | None] = [None] * n
    examples: list[str | None] = [None] * n
    if originals:
        changed_index = sorted(originals)
        finals = current.take(pa.array(changed_index, type=pa.int64())).to_pylist()
        for i, final in zip(changed_index, finals, strict=True):
            hashes[i] = text_hash(final)
            examples[i] = change_example(originals[i], final)
    valid = pc.is_valid(texts).to_numpy(zero_copy_only=False)
    return pa.StructArray.from_arrays(
        [
            current.cast(pa.string()),
            pa.array(hashes, type=pa.string()),
            pa.array(encoding_fixed & valid),
            pa.array(symbols_changed & valid),
            pa.array(sent & valid),
            pa.array(examples, type=pa.string()),
        ],
        fields=list(RESULT_TYPE),
    )
