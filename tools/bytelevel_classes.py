"""Print the code points whose class (letter, number, space, other) the installed ``tokenizers``
regex engine gives differently from Python's own Unicode tables, as ranges for
``contentx_udf/text/bytelevel.py``'s ``NEWER_UNICODE`` (the library's Oniguruma follows a newer
Unicode than Python 3.11's 14.0: letters and numbers assigned since then).

    python tools/bytelevel_classes.py [--all]

Each code point ``c`` is probed as ``a c 1 c !``, whose ByteLevel split names its class; ``--all``
checks every code point against the table (not only those Python calls unassigned).
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contentx_udf.text.bytelevel import LETTER, NUMBER, OTHER, SPACE, classes  # noqa: E402

#: The split of "a c 1 c !" by the class of c.
SHAPES = {
    ("ac", "1", "c", "!"): LETTER,
    ("a", "c1c", "!"): NUMBER,
    ("a", "c", "1", "c!"): OTHER,
    ("a", "c", "1", "c", "!"): SPACE,
}


def probe(points: list[int]) -> dict[int, int]:
    """Each code point's class as the library's ByteLevel pre-tokenizer splits it."""
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    found = {}
    step = 20_000
    for k in range(0, len(points), step):
        chunk = points[k : k + step]
        text = "".join(f"a{chr(c)}1{chr(c)}!\n" for c in chunk)
        pieces = [text[s:e] for _, (s, e) in pre.pre_tokenize_str(text)]
        # each probe ends with "!" and a lone newline piece
        groups, current = [], []
        for piece in pieces:
            if piece == "\n":
                groups.append(current)
                current = []
            else:
                current.append(piece)
        for c, group in zip(chunk, groups, strict=True):
            shape = tuple(p.replace(chr(c), "c") for p in group)
            if shape not in SHAPES:
                raise SystemExit(f"U+{c:04X}: an unknown split {shape!r}")
            found[c] = SHAPES[shape]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--all", action="store_true", help="check every code point, not only the unassigned")
    args = parser.parse_args()
    table = classes()
    points = [
        c
        for c in range(0x110000)
        if c >= 0x80 and not 0xD800 <= c < 0xE000 and (args.all or unicodedata.category(chr(c)) == "Cn")
    ]
    found = probe(points)
    ranges: list[list[int]] = []
    for c in sorted(found):
        if found[c] == table[c]:
            continue
        if ranges and ranges[-1][1] == c - 1 and ranges[-1][2] == found[c]:
            ranges[-1][1] = c
        else:
            ranges.append([c, c, found[c]])
    print(f"# {len(points)} code points probed, {sum(e - s + 1 for s, e, _ in ranges)} differ")
    for start, end, klass in ranges:
        print(f"    (0x{start:04X}, 0x{end:04X}, {klass}),")
    return 0


if __name__ == "__main__":
    sys.exit(main())
