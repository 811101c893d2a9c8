"""Where contentx's own files are: the repository's ``conf/`` (Spark defaults, the jobs' TOML
settings)."""

from __future__ import annotations

from pathlib import Path

#: The repository's configuration directory: ``conf/spark-defaults.conf``, ``log4j2.properties``,
#: ``extract.toml``.
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"
