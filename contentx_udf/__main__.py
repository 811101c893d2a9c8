"""``python -m contentx_udf ...``: the contentx command line."""

from contentx_udf.cli import main

raise SystemExit(main())
