"""The Java runtime that starts Spark: found or named in one sentence (:data:`JAVA_HINT`)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from ..errors import UserError

JAVA_HINT = (
    "Java 17 or 21 is required to run Spark and was not found: install it "
    "(Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`, macOS: `brew install openjdk@17`) "
    "or set JAVA_HOME to an installed JDK/JRE"
)


def check_java() -> None:
    """Fail with one clear sentence when no Java runtime can start Spark."""
    java_version_text()


def java_version_text() -> str:
    """What ``java -version`` prints (the JVM Spark will run), or :class:`UserError` with
    :data:`JAVA_HINT` when no Java runtime starts."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise UserError(JAVA_HINT)
    return _java_version(java)


@functools.lru_cache(maxsize=4)
def _java_version(java: str) -> str:
    """``java -version`` of the binary ``java`` (run once per binary and process)."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        raise UserError(JAVA_HINT) from None
    if out.returncode != 0:
        raise UserError(JAVA_HINT)
    return f"{java}\n{out.stderr}{out.stdout}"
