"""spark-submit entry: build a text corpus from extraction tables (filters, dedup, report).

    spark-submit jobs/build_corpus.py --input TABLE... --output DIR [--languages en,de] [--dedup near]
    python jobs/build_corpus.py --input TABLE... --output DIR      # embedded local[*] Spark

All options: --help.  The job itself is the contentx_udf.corpus package.
"""

import sys
from pathlib import Path

try:
    from contentx_udf.commands import main_of
except ImportError:  # running from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from contentx_udf.commands import main_of

if __name__ == "__main__":
    sys.exit(main_of("corpus")(None))
