"""Pack FineWeb-2's per-language filter configurations into one compact file of the package.

Reads the 1,929 YAML files of ``huggingface/fineweb-2``'s ``configs/`` (``{iso639-3}_{Script}.yml``;
here ``../shared/data/fineweb2-configs``, see its SOURCE) and writes
``contentx_udf/corpus/quality/data/fineweb2.json.gz``: ``{"source": ..., "configs": {key: config}}``
with every config exactly as YAML loads it (sorted keys, gzip without a timestamp, so the output
is byte-identical from run to run), and copies the LICENSE beside it.  PyYAML is needed by this
tool only; the package reads the JSON.

    python tools/pack_fineweb2_configs.py [CONFIG_DIR]
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "fineweb2-configs"
OUTPUT = ROOT / "contentx_udf" / "corpus" / "quality" / "data" / "fineweb2.json.gz"
SOURCE_NOTE = (
    "huggingface/fineweb-2 configs/ (commit d0defb2, 2025-10-27), Apache License 2.0: "
    "https://github.com/huggingface/fineweb-2/tree/main/configs"
)


def load_configs(directory: Path) -> dict[str, dict]:
    """Every ``*.yml`` of ``directory`` as YAML loads it, by file stem (the language key)."""
    configs = {}
    for path in sorted(directory.glob("*.yml")):
        with open(path, encoding="utf-8") as fh:
            configs[path.stem] = yaml.safe_load(fh)
    return configs


def pack(directory: Path, output: Path = OUTPUT) -> int:
    configs = load_configs(directory)
    document = {"source": SOURCE_NOTE, "configs": configs}
    data = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    shutil.copyfile(directory / "LICENSE", output.parent / "LICENSE.fineweb-2")
    return len(configs)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    count = pack(source)
    print(f"{count} configurations -> {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size:,} bytes)")
