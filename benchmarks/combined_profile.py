"""Where ``combined`` spends its time, stage by stage, beside resiliparse in the same run.

    python benchmarks/combined_profile.py [--gold DIR ...] [--sample N] [--repeat 3]

Default pages: the WCXB development split and the scrapinghub pages (1,678; ``--sample N`` takes
a seeded sample of them).  For every page, interleaved (so that the shared machine's load hits
both alike), the CPU time (``time.process_time_ns``, best of ``--repeat``) of:

* ``resiliparse``: ``extract_plain_text(HTMLTree.parse_from_bytes(page), main_content=True)``
  (needs the ``bench`` extra);
* ``combined``: ``extract(page, "combined", url=...)``, the public call, with the compiled passes
  and (``combined, pure Python``) without them (``contentx_udf.page.compiled.set_enabled``);
* its stages (with the compiled passes; ``--python-stages`` adds them without), run one after
  the other on a fresh parse as ``combined`` runs them: decode + parse +
  cleaning (``Document.parse``), the DOM arrays (``doc.dom``), the ``<noscript>`` check
  (``content_document``), the blocks (``page_blocks``), the word counts, CETD's densities and
  selection, CoreEx's analysis, the class/id keyword look-up (``_keyword_bits``), the rest of
  ``block_features`` (its total less the blocks and keywords it recomputes), the block model
  (``predict`` and the template smoothing), the page-type classifier (``page_threshold``) and the
  output text.

Prints a table (median and mean ms per page, share of ``combined``'s median) and one RESULT line.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import extract  # noqa: E402
from contentx_udf.evaluation import GoldPage, load_gold  # noqa: E402
from contentx_udf.methods import block_features as bf  # noqa: E402
from contentx_udf.methods.blocks import content_document, page_blocks  # noqa: E402
from contentx_udf.methods.cetd import densities, density_sum_selection  # noqa: E402
from contentx_udf.methods.combined import block_probability, model_for, select_blocks  # noqa: E402
from contentx_udf.methods.coreex import cached_word_counts, coreex_analysis  # noqa: E402
from contentx_udf.page import compiled  # noqa: E402
from contentx_udf.page.document import Document  # noqa: E402
from contentx_udf.settings import DEFAULTS, resolve_params  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
DEFAULT_GOLD = (SHARED / "wcxb-dev", SHARED / "scrapinghub")


def resiliparse_fn() -> Callable[[bytes], object] | None:
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree
    except ImportError:
        return None
    return lambda page: extract_plain_text(HTMLTree.parse_from_bytes(page), main_content=True)


STAGES = (
    "parse + cleaning",
    "DOM arrays",
    "noscript check",
    "blocks",
    "word counts",
    "CETD densities + selection",
    "CoreEx analysis",
    "class/id keywords",
    "other features",
    "block model + smoothing",
    "page-type classifier",
    "output text",
)


def stage_times(page: GoldPage, params: dict) -> list[float]:
    """CPU seconds of each of STAGES on one page (a fresh parse)."""
    clock = time.process_time_ns
    out: list[float] = []
    t = clock()

    def lap() -> None:
        nonlocal t
        now = clock()
        out.append((now - t) / 1e9)
        t = now

    model = model_for(params)
    doc = Document.parse(page.html, url=page.url)
    lap()
    doc.dom  # noqa: B018
    lap()
    view, from_noscript = content_document(doc)
    lap()
    dom = view.dom  # (a noscript view's arrays are counted here)
    blocks = page_blocks(dom)
    blocks_s = (clock() - t) / 1e9
    lap()
    cached_word_counts(dom)
    lap()
    densities(dom, DEFAULTS["cetd-ds"], composite=False)
    density_sum_selection(dom, DEFAULTS["cectd-ds"], composite=True)
    lap()
    coreex_analysis(dom, DEFAULTS["coreex"])
    lap()
    if blocks.size:
        bf._keyword_bits(view, dom, blocks.first_node)
    keywords_s = (clock() - t) / 1e9
    lap()
    features = bf.block_features(view, noscript_view=from_noscript)
    now = clock()
    # block_features recomputes the blocks and the keywords (the rest it reads from dom's cache)
    out.append(max((now - t) / 1e9 - blocks_s - keywords_s, 0.0))
    t = now
    if features.blocks.size:
        probability = block_probability(model, features.matrix, features.templates, params)
        lap()
        threshold, _ = model.page_threshold(features.matrix, params["mode"])
        lap()
        heading = features.column("heading") > 0
        keep = select_blocks(probability, heading, threshold, params["heading_window"])
        "\n".join(features.blocks.texts[i] for i in keep.nonzero()[0].tolist())
        lap()
    else:
        out.extend([0.0, 0.0, 0.0])
    return out


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time_ns()
        fn()
        best = min(best, (time.process_time_ns() - t0) / 1e9)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gold", type=Path, action="append", help="gold set directories (repeatable)")
    parser.add_argument("--sample", type=int, default=0, help="a seeded sample of this many pages")
    parser.add_argument("--repeat", type=int, default=3, help="runs per page; the fastest counts")
    parser.add_argument(
        "--python-stages", action="store_true", help="the stages without the compiled passes too"
    )
    args = parser.parse_args()
    if compiled.module() is None:
        sys.exit(f"compiled passes off: {compiled.status()}")
    pages: list[GoldPage] = [p for gold in args.gold or DEFAULT_GOLD for p in load_gold(gold)]
    if args.sample:
        pages = random.Random(0).sample(pages, min(args.sample, len(pages)))
    params = resolve_params("combined", {})
    resiliparse = resiliparse_fn()
    for page in pages[:5]:  # warm-up: imports, the model, caches
        extract(page.html, "combined", url=page.url)
        stage_times(page, params)

    combined_s: list[float] = []
    python_s: list[float] = []
    resiliparse_s: list[float] = []
    stages: list[list[float]] = []
    python_stages: list[list[float]] = []
    for page in pages:
        combined_s.append(best_of(lambda p=page: extract(p.html, "combined", url=p.url), args.repeat))
        compiled.set_enabled(False)
        python_s.append(best_of(lambda p=page: extract(p.html, "combined", url=p.url), args.repeat))
        if args.python_stages:
            runs = [stage_times(page, params) for _ in range(args.repeat)]
            python_stages.append([min(r[k] for r in runs) for k in range(len(STAGES))])
        compiled.set_enabled(True)
        if resiliparse is not None:
            resiliparse_s.append(best_of(lambda p=page: resiliparse(p.html), args.repeat))
        runs = [stage_times(page, params) for _ in range(args.repeat)]
        stages.append([min(r[k] for r in runs) for k in range(len(STAGES))])

    med = statistics.median(combined_s)
    print(f"{len(pages)} pages, CPU ms per page (best of {args.repeat}), interleaved page by page")
    header = f"{'':30}{'median':>9}{'mean':>9}{'share':>8}"
    print(header + (f"{'python':>9}{'mean':>9}" if python_stages else ""))

    def row(name: str, values: list[float], python: list[float] | None = None) -> None:
        m = statistics.median(values)
        line = f"{name:30}{m * 1e3:9.3f}{statistics.fmean(values) * 1e3:9.3f}{m / med:8.0%}"
        if python:
            line += f"{statistics.median(python) * 1e3:9.3f}{statistics.fmean(python) * 1e3:9.3f}"
        print(line)

    for k, name in enumerate(STAGES):
        row(f"  {name}", [s[k] for s in stages], [s[k] for s in python_stages])
    row("  sum of the stages", [sum(s) for s in stages], [sum(s) for s in python_stages])
    row("combined (extract)", combined_s)
    row("combined, pure Python", python_s)
    pmed = statistics.median(python_s)
    print(f"pure Python / compiled: {pmed / med:.2f} (medians)")
    result = f"RESULT pages={len(pages)} combined_ms={med * 1e3:.3f} python_ms={pmed * 1e3:.3f}"
    if resiliparse_s:
        rmed = statistics.median(resiliparse_s)
        row("resiliparse", resiliparse_s)
        ratios = [c / r for c, r in zip(combined_s, resiliparse_s, strict=True) if r > 0]
        print(
            f"combined / resiliparse: {med / rmed:.2f} (medians), {statistics.median(ratios):.2f} "
            f"(median of per-page ratios)"
        )
        result += f" resiliparse_ms={rmed * 1e3:.3f} ratio={med / rmed:.2f}"
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
