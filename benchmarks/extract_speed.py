"""Extraction speed on the development set: CPU time per page, one process, one run.

    python benchmarks/extract_speed.py [--gold ../shared/data/scrapinghub] [--repeat 3]

Measures, per page, ``time.process_time`` of:
  * the floor: selectolax parse + ``body.text()`` (anything that parses pays this);
  * each method of METHODS through ``extract`` (decode + parse + method);
  * ``extract_all`` with every method (one parse, shared statistics);
  * trafilatura and resiliparse when installed (``pip install -e .[bench]``);
  * the language id + text hash the job adds to every ``ok`` row (``contentx_udf.text.language``),
    on the default method's text of each page (goal: below the default method's own cost).
Prints a table (median ms, p95 ms, pages/s, median ratio to the floor) and, last, one line
with every median ratio so runs can be compared.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from contentx_udf import DEFAULT_METHOD, METHODS, extract, extract_all  # noqa: E402
from contentx_udf.text.language import detect_language, text_hash  # noqa: E402

LANGUAGE_ROW = "language id + hash"


def load_pages(gold: Path) -> list[bytes]:
    files = sorted((gold / "html").glob("*.html.gz"))
    if not files:
        sys.exit(f"no pages under {gold}/html")
    return [gzip.decompress(f.read_bytes()) for f in files]


def floor(page: bytes) -> None:
    tree = LexborHTMLParser(page.decode("utf-8", "replace"))
    if tree.body is not None:
        tree.body.text()


def timings(fn: Callable[[bytes], object], pages: list, repeat: int) -> list[float]:
    """Per-page CPU seconds, the minimum over ``repeat`` runs of each page."""
    out = []
    for page in pages:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time_ns()
            fn(page)
            best = min(best, (time.process_time_ns() - t0) / 1e9)
        out.append(best)
    return out


def optional_competitors() -> dict[str, Callable[[bytes], object]]:
    found: dict[str, Callable[[bytes], object]] = {}
    try:
        import trafilatura

        found["trafilatura"] = lambda page: trafilatura.extract(page.decode("utf-8", "replace"))
    except ImportError:
        pass
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        found["resiliparse"] = lambda page: extract_plain_text(
            HTMLTree.parse_from_bytes(page), main_content=True
        )
    except ImportError:
        pass
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gold", type=Path, default=REPO.parent / "shared" / "data" / "scrapinghub")
    parser.add_argument("--repeat", type=int, default=3, help="runs per page; the fastest counts")
    args = parser.parse_args()
    pages = load_pages(args.gold)
    for page in pages[:5]:  # warm-up: imports, caches
        extract_all(page)

    rows: list[tuple[str, list[float]]] = [("floor (parse+text)", timings(floor, pages, args.repeat))]
    for method in METHODS:
        rows.append((method, timings(lambda p, m=method: extract(p, m), pages, args.repeat)))
    rows.append(
        (f"extract_all ({len(METHODS)})", timings(lambda p: extract_all(p, METHODS), pages, args.repeat))
    )
    for name, fn in optional_competitors().items():
        rows.append((name, timings(fn, pages, args.repeat)))
    texts = [extract(p).text for p in pages]
    detect_language(texts[0])  # loads the model
    rows.append((LANGUAGE_ROW, timings(lambda t: (detect_language(t), text_hash(t)), texts, args.repeat)))

    base = statistics.median(rows[0][1])
    print(f"{len(pages)} pages, CPU time per page (best of {args.repeat})")
    print(f"{'':22}{'median ms':>10}{'p95 ms':>9}{'pages/s':>9}{'x floor':>9}")
    ratios = []
    for name, ts in rows:
        med = statistics.median(ts)
        p95 = statistics.quantiles(ts, n=20)[-1]
        ratio = med / base
        mark = " (default)" if name == DEFAULT_METHOD else ""
        print(f"{name:22}{med * 1e3:10.3f}{p95 * 1e3:9.3f}{1 / med:9.0f}{ratio:9.2f}{mark}")
        ratios.append(f"{name}={ratio:.2f}")
    print("RESULT floor_ms=%.3f " % (base * 1e3) + " ".join(ratios))
    timing = dict(rows)
    lid, default = statistics.median(timing[LANGUAGE_ROW]), statistics.median(timing[DEFAULT_METHOD])
    print(
        f"language id + hash: {lid * 1e3:.3f} ms per page, {lid / default:.0%} of {DEFAULT_METHOD}'s "
        f"{default * 1e3:.3f} ms ({'below' if lid < default else 'NOT below'} the default method's cost)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
