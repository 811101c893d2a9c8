"""Where contentx's own files are: ``conf/`` (Spark defaults, log4j, the jobs' TOML settings)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

#: The configuration directory: ``spark-defaults.conf``, ``log4j2.properties``, ``extract.toml``,
#: ``corpus.toml``.  The repository keeps it at its top level (``conf/``); ``contentx_udf/conf`` is a
#: symbolic link to it, so a checkout and an editable install (``./dev.sh``, ``pip install -e .``)
#: read the repository's ``conf/`` (resolved to that path), while a wheel or ``pip install .``
#: ships its files as package data (pyproject.toml) in the installed ``contentx_udf/conf/``.  A
#: checkout without symbolic links (the link is then a small file) reads the top-level ``conf/``.
CONF_DIR = (_PACKAGE / "conf").resolve()
if not CONF_DIR.is_dir():
    CONF_DIR = _PACKAGE.parent / "conf"
