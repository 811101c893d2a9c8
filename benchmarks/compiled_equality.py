"""The compiled passes against the Python code on every development page.

    python benchmarks/compiled_equality.py [--gold DIR ...] [--cold]

Default pages: the WCXB development split and the scrapinghub pages (1,678).  For each page
(``tests/methods/compiled_check.differences``): the DOM arrays and the class/id keyword bits on
one parse, then ``combined`` with and without the compiled passes: the block texts, the feature
matrix (to 1e-9; equal in practice), the template groups, the block model's scores, the page-type
probabilities and the kept blocks.  ``--cold`` empties the keyword caches before every page (every
class/id value new, as on a site the process has not seen).  Also compares the extracted text and
scores of ``combined`` and ``cectd-ds`` through ``extract``.  Prints the pages with differences
and one RESULT line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from contentx_udf import extract_all  # noqa: E402
from contentx_udf.evaluation import load_gold  # noqa: E402
from contentx_udf.methods import block_features as bf  # noqa: E402
from contentx_udf.page import compiled  # noqa: E402
from tests.methods.compiled_check import compiled_passes, differences  # noqa: E402

SHARED = Path(os.environ.get("CONTENTX_SHARED", REPO.parent / "shared")) / "data"


def outputs(page, enabled: bool) -> dict:
    with compiled_passes(enabled):
        results = extract_all(page.html, ("combined", "cectd-ds"), url=page.url)
    return {
        m: (r.status, r.text, {k: v for k, v in r.scores.items() if k != "ms"}) for m, r in results.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gold", type=Path, action="append")
    parser.add_argument("--cold", action="store_true", help="empty the keyword caches before every page")
    args = parser.parse_args()
    if compiled.module() is None:
        sys.exit(f"compiled passes off: {compiled.status()}")
    pages = [
        p for gold in args.gold or (SHARED / "wcxb-dev", SHARED / "scrapinghub") for p in load_gold(gold)
    ]
    started = time.perf_counter()
    failed = 0
    for page in pages:
        if args.cold:
            for cache in (bf._TOKEN_BITS, bf._VALUE_BITS):
                cache.clear()
            compiled.module().clear_key_cache()
        found = differences(page.html, page.url)
        if outputs(page, False) != outputs(page, True):
            found.append("extract outputs")
        if found:
            failed += 1
            print(f"{page.id}: {', '.join(found)}")
    print(
        f"{len(pages)} pages, {failed} with differences ({time.perf_counter() - started:.0f} s)"
        + (", keyword caches emptied before every page" if args.cold else "")
    )
    print(f"RESULT pages={len(pages)} differing={failed} cold={int(args.cold)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
