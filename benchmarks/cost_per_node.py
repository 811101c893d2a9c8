"""Why ``combined`` is further from resiliparse on some page sets than on others: CPU per page
against the page's size, for ``combined``, resiliparse and a bare Lexbor parse.

    python benchmarks/cost_per_node.py [--sample 300]

For the scrapinghub pages (181) and a seeded sample of the WCXB development pages, per page (best
of 3, ``time.process_time_ns``): ``extract(page, "combined")``, resiliparse's
``extract_plain_text(HTMLTree.parse_from_bytes(page), main_content=True)`` (needs the ``bench``
extra) and selectolax's ``LexborHTMLParser(page)``.  Prints, per set, the medians of the page size,
of the DOM nodes (``Document.dom``), of each method's CPU, of its CPU per 1,000 nodes and of its
CPU in bare parses of the same page; and each method's least-squares line ``ms = a + b x nodes``.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from contentx_udf import extract  # noqa: E402
from contentx_udf.evaluation import load_gold  # noqa: E402
from contentx_udf.page.document import Document  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from combined_profile import best_of  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def best_ms(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs, CPU milliseconds (:func:`combined_profile.best_of`)."""
    return best_of(fn, repeat) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=300, help="WCXB dev pages (seeded sample)")
    args = parser.parse_args()
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree
    except ImportError:
        sys.exit("resiliparse is not installed (pip install -e .[bench])")
    wcxb = load_gold(SHARED / "wcxb-dev")
    sets = {
        "scrapinghub": load_gold(SHARED / "scrapinghub"),
        f"wcxb-dev ({args.sample})": random.Random(0).sample(wcxb, min(args.sample, len(wcxb))),
    }

    def resiliparse(html: bytes) -> str:
        return extract_plain_text(HTMLTree.parse_from_bytes(html), main_content=True)

    for page in sets["scrapinghub"][:5]:  # warm-up
        extract(page.html, "combined", url=page.url)
    methods = ("combined", "resiliparse", "lexbor parse")
    for name, pages in sets.items():
        rows = []
        for page in pages:
            nodes = Document.parse(page.html).dom.size
            rows.append(
                (
                    len(page.html) / 1e3,
                    nodes,
                    best_ms(lambda p=page: extract(p.html, "combined", url=p.url)),
                    best_ms(lambda p=page: resiliparse(p.html)),
                    best_ms(lambda p=page: LexborHTMLParser(p.html)),
                )
            )
        a = np.array(rows)
        nodes = a[:, 1]
        print(f"{name}: {len(pages)} pages, median {np.median(a[:, 0]):.0f} KB, {np.median(nodes):.0f} nodes")
        for k, method in enumerate(methods):
            ms = a[:, 2 + k]
            line = np.linalg.lstsq(np.stack([np.ones(len(a)), nodes / 1e3], axis=1), ms, rcond=None)[0]
            print(
                f"  {method:13} {np.median(ms):7.3f} ms  {np.median(ms / nodes * 1e3):6.3f} ms per 1,000"
                " nodes"
                f"  {np.median(ms / a[:, 4]):5.2f} parses  (ms = {line[0]:.3f} + {line[1]:.3f} x 1,000 nodes)"
            )
        ratio = np.median(a[:, 2]) / np.median(a[:, 3])
        print(f"  combined / resiliparse (medians): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
