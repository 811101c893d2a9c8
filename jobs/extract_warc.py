"""spark-submit entry: extract the main text of WARC files into a Parquet table.

    spark-submit jobs/extract_warc.py --input FILE.warc.gz --output OUT
    python jobs/extract_warc.py --input FILE.warc.gz --output OUT   # embedded local[*] Spark

All options: --help.  The job itself is the contentx_udf.spark package (thin over the library).
"""

import sys
from pathlib import Path

try:
    from contentx_udf.commands import main_of
except ImportError:  # running from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from contentx_udf.commands import main_of

if __name__ == "__main__":
    sys.exit(main_of("run")(None))
