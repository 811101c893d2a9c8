"""Screenshots of the built manual (after `./dev.sh docs`) with headless Chromium, to look at it.

    .venv/bin/python tools/docs_screenshots.py [--site site] [--out screenshots]

Writes home.png (the home page), corpus.png (the top of "Building a corpus"), corpus-report.png
(its report section with the sample corpus's plots, found by the red bars of the "dropped" plot)
and reference.png (the generated command reference). Needs a `chromium` binary (Debian's package)
and Pillow (matplotlib's dependency). Chromium takes one tall capture per page, cropped here:
its --screenshot ignores a URL's #fragment.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

WIDTH = 1366


def capture(page: Path, height: int) -> Image.Image:
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "shot.png"
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={WIDTH},{height}", f"--screenshot={shot}", page.resolve().as_uri()],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        return Image.open(shot).convert("RGB")


def first_red_row(image: Image.Image) -> int:
    """The first row with a run of the report plots' red (matplotlib's tab:red bars)."""
    a = np.asarray(image).astype(int)
    red = (a[:, :, 0] > 200) & (a[:, :, 1] < 60) & (a[:, :, 2] < 60)
    rows = np.flatnonzero(red.sum(axis=1) > 20)
    if not len(rows):
        raise SystemExit("no report plot found on the corpus page")
    return int(rows[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=Path("site"))
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    capture(args.site / "index.html", 1400).save(args.out / "home.png")
    corpus = capture(args.site / "corpus.html", 30000)
    corpus.crop((0, 0, WIDTH, 1500)).save(args.out / "corpus.png")
    y = first_red_row(corpus)
    corpus.crop((0, max(0, y - 900), WIDTH, y + 700)).save(args.out / "corpus-report.png")
    capture(args.site / "reference.html", 1500).save(args.out / "reference.png")
    for name in ("home", "corpus", "corpus-report", "reference"):
        print(args.out / f"{name}.png")


if __name__ == "__main__":
    main()
