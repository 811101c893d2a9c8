"""spark-submit entry: train a fastText quality classifier (contentx train-quality).

    spark-submit jobs/train_quality.py --positive SRC --negative SRC --output MODEL [--max-per-class N]
    python jobs/train_quality.py --positive SRC --negative SRC --output MODEL   # embedded local[*] Spark

All options: --help.  The job itself is contentx_udf.corpus.train_quality.
"""

import sys
from pathlib import Path

try:
    from contentx_udf.commands import main_of
except ImportError:  # running from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from contentx_udf.commands import main_of

if __name__ == "__main__":
    sys.exit(main_of("train-quality")(None))
