"""FineWeb-2's final touches (encoding repair, symbol lines) against datatrove's formatters.

    python benchmarks/final_touches.py [--texts /tmp/contentx-final-touches/texts.parquet]
                                       [--batch 1024] [--rounds 3] [--refresh]

1. Texts: the ``ok`` texts of ``combined`` (the default method) on the 1,678 development pages
   (``../shared/data/wcxb-dev`` and ``scrapinghub``) and every HTML record of
   ``../shared/warc/real/*.warc*`` (a ``.warc`` whose ``.warc.gz`` is there too is read once),
   cached in ``--texts``; and a hand-made set (:func:`hand_made`): UTF-8 read as Latin-1,
   Windows-1252 and GBK, C1 and other control characters, terminal escapes, HTML entities,
   ``|`` table lines, line separators.
2. Identity: every text through datatrove's ``FTFYFormatter()`` then
   ``SymbolLinesFormatter(symbols_to_remove=["|"], replace_char="\\n")`` (FineWeb-2's arguments),
   and through :func:`contentx_udf.corpus.formatters.format_batch`; the outputs must be equal,
   text for text.  Also: no text the pre-check passes over is one ftfy changes (ftfy run on all).
3. Cost: CPU ms per document of both on the same texts in the same run (``--rounds`` alternated
   rounds, batches of ``--batch``), the share of texts the pre-check sends to ftfy, and the
   documents each step changed, with examples.

Needs the ``bench`` extra (datatrove); never imported by contentx itself.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import extract  # noqa: E402
from contentx_udf.corpus.formatters import (  # noqa: E402
    FormatSettings,
    change_example,
    fix_text,
    format_batch,
    needs_ftfy,
)
from contentx_udf.evaluation import load_gold  # noqa: E402
from contentx_udf.warc.reader import iter_warc_rows  # noqa: E402

GOLD = ("wcxb-dev", "scrapinghub")
CACHE = Path("/tmp/contentx-final-touches")


def warc_files(shared: Path) -> list[Path]:
    files = []
    for path in sorted((shared / "warc" / "real").glob("*.warc*")):
        if path.name.endswith((".wat.gz", ".wet.gz")):
            continue
        if path.suffix == ".warc" and path.with_name(path.name + ".gz").exists():
            continue
        files.append(path)
    return files


def extract_texts(path: Path, shared: Path) -> pa.Table:
    rows = []
    for gold in GOLD:
        for page in load_gold(shared / "data" / gold):
            result = extract(page.html, url=page.url)
            if result.status == "ok":
                rows.append((gold, page.url, result.text))
    for warc in warc_files(shared):
        for row in iter_warc_rows(str(warc)):
            if row.status != "ok" or not row.is_html:
                continue
            result = extract(row.payload, url=row.url, content_type=row.http_content_type)
            if result.status == "ok":
                rows.append((warc.name, row.url, result.text))
    table = pa.table({k: [r[i] for r in rows] for i, k in enumerate(("source", "url", "text"))})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table


def _misread(text: str, encoding: str) -> str:
    return text.encode("utf-8").decode(encoding, errors="replace")


def hand_made() -> list[str]:
    """Mojibake, control characters and table lines made by hand (each kind several ways)."""
    samples = [
        "Le café est fermé à cause de la grève — réouverture lundi.",
        "It’s “quoted” – and the price is 5 €.",
        "Grüße aus Köln: Straße, Fuß, Maß.",
        "Ψηφιακή βιβλιοθήκη της Ελλάδας",
        "Москва — столица России.",
        "المكتبة الرقمية العربية",
        "中文网页的编码问题：乱码。",
        "日本語のテキストです。",
        "Tiếng Việt có dấu.",
        "ภาษาไทยเป็นภาษาที่มีวรรณยุกต์",
        "🙂 emoji ✔ check ★ star",
    ]
    out: list[str] = []
    for s in samples:
        out.append(s)
        for encoding in ("latin-1", "windows-1252", "gbk", "windows-1251", "mac_roman"):
            out.append(_misread(s, encoding))
            out.append(f"Intro line.\n{_misread(s, encoding)}\nLast line.")
        out.append(f"{s}\x85with a C1 \x96 dash\x9c")
        out.append(f"{s}\x00\x07 bell and \ufeff BOM \u206a and \x1b[1;31mred\x1b[0m")
        out.append(f"{s} &amp; &eacute;t&eacute; &#x2019; &#8217; &EACUTE;")
        out.append(f"<b>{s}</b> &amp; stays")
    tables = [
        "Name | Age\n| --- | --- |\n|||\nAlice | 30\n|\n| |\nBob | 40",
        "Header\n|\n|\n|\n\nFooter\n",
        "a\r\nb\rc\x0bd\x0ce\x1cf\u2028g\u2029h\x85i",
        "|||\n|||",
        "|\t|\nkept",
        "",
        "\n",
        "| | |  |",
        "line | with bar\n  |  \nnext",
    ]
    return out + tables


def datatrove_formatters():
    from datatrove.pipeline.formatters import FTFYFormatter, SymbolLinesFormatter

    ftfy = FTFYFormatter()
    symbols = SymbolLinesFormatter(symbols_to_remove=["|"], replace_char="\n")
    return lambda text: symbols.format(ftfy.format(text))


def ours_ms(texts: pa.Array, batch: int, settings: FormatSettings) -> tuple[float, list[str]]:
    format_batch(texts[:batch], settings)
    started = time.process_time()
    out: list[str] = []
    for i in range(0, len(texts), batch):
        out += format_batch(texts[i : i + batch], settings).field("text").to_pylist()
    return (time.process_time() - started) * 1000 / len(texts), out


def theirs_ms(texts: list[str], fmt) -> tuple[float, list[str]]:
    for t in texts[:20]:
        fmt(t)
    started = time.process_time()
    out = [fmt(t) for t in texts]
    return (time.process_time() - started) * 1000 / len(texts), out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--texts", type=Path, default=CACHE / "texts.parquet")
    p.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared data")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--refresh", action="store_true", help="extract the texts again")
    p.add_argument("--examples", type=int, default=6)
    args = p.parse_args(argv)
    if args.refresh or not args.texts.exists():
        started = time.time()
        table = extract_texts(args.texts, args.shared)
        print(f"extracted {table.num_rows} ok texts in {time.time() - started:.0f} s -> {args.texts}")
    table = pq.read_table(args.texts)
    settings = FormatSettings(fix_encoding=True, symbol_lines=True)
    theirs = datatrove_formatters()
    sources = table.column("source").to_pylist()
    groups = {
        "development pages": [i for i, s in enumerate(sources) if s in set(GOLD)],
        "real WARCs": [i for i, s in enumerate(sources) if s not in set(GOLD)],
    }
    all_texts = table.column("text").to_pylist()
    sets = {name: [all_texts[i] for i in index] for name, index in groups.items()}
    sets["hand-made"] = hand_made()
    failures = 0
    for name, texts in sets.items():
        arr = pa.array(texts, pa.string())
        result = format_batch(arr, settings)
        ours = result.field("text").to_pylist()
        reference = [theirs(t) for t in texts]
        differ = [i for i, (a, b) in enumerate(zip(ours, reference, strict=True)) if a != b]
        sent = needs_ftfy(arr)
        ftfy_changed = np.array([fix_text(t) != t for t in texts])
        skipped = int((ftfy_changed & ~sent).sum())
        failures += len(differ) + skipped
        fixed = result.field("encoding_fixed").to_numpy(zero_copy_only=False)
        lines = result.field("symbol_lines").to_numpy(zero_copy_only=False)
        print(
            f"{name}: {len(texts)} texts, identical {len(texts) - len(differ)}/{len(texts)}, "
            f"sent to ftfy {int(sent.sum())} ({sent.mean():.1%}), ftfy changed {int(ftfy_changed.sum())}, "
            f"changed but not sent {skipped}; encoding fixed {int(fixed.sum())}, symbol lines "
            f"{int(lines.sum())}"
        )
        for i in differ[:3]:
            print(f"  DIFFERS: {change_example(reference[i], ours[i])}")
        if name != "hand-made":
            for i in np.flatnonzero(fixed)[: args.examples]:
                print(f"  encoding: {result.field('example')[int(i)].as_py()}")
            for i in np.flatnonzero(lines & ~fixed)[:2]:
                print(f"  symbol lines: {result.field('example')[int(i)].as_py()}")
    texts = pa.array(all_texts, pa.string())
    sent_share = float(needs_ftfy(texts).mean())
    ratios, mine, others = [], [], []
    for round_ in range(args.rounds):
        a, _ = ours_ms(texts, args.batch, settings)
        b, _ = theirs_ms(all_texts, theirs)
        mine.append(a)
        others.append(b)
        ratios.append(a / b)
        print(f"round {round_ + 1}: contentx {a:.4f} ms/doc, datatrove {b:.4f} ms/doc, ratio {a / b:.4f}")
    print(
        f"RESULT texts={len(all_texts)} hand_made={len(sets['hand-made'])} differing={failures} "
        f"sent_to_ftfy={sent_share:.4f} contentx_ms={statistics.median(mine):.4f} "
        f"datatrove_ms={statistics.median(others):.4f} ratio={statistics.median(ratios):.4f}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
