"""spark-submit entry: re-cut a corpus built with --signals (contentx select).

    spark-submit jobs/select_corpus.py --from DIR --output DIR2 [--filter-set KEY=VALUE ...] [--where SQL]
    python jobs/select_corpus.py --from DIR --output DIR2      # embedded local[*] Spark

All options: --help.  The job itself is contentx_udf.corpus.select.
"""

import sys
from pathlib import Path

try:
    from contentx_udf.commands import main_of
except ImportError:  # running from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from contentx_udf.commands import main_of

if __name__ == "__main__":
    sys.exit(main_of("select")(None))
