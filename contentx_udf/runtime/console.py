"""A quiet console for the driver: no JVM or Spark warnings and no stage bars unless asked.

Three sources of noise, each silenced by Spark's or the JVM's own means, and each given back by
``--verbose`` (:func:`quiet_settings`, :func:`launch_gateway`):

* **log4j.**  ``conf/log4j2.properties`` sets Spark's loggers to ``${env:CONTENTX_SPARK_LOG_LEVEL:-error}``:
  errors only, unless the variable says otherwise (``--verbose`` sets it to ``warn``, Spark's own
  level for an interactive shell, before the JVM starts).  PythonGatewayServer's logger has the same
  level, or Spark, which takes an embedded driver for a shell, resets the console to ``WARN`` and
  says so.  A user's own log4j configuration (their ``SPARK_CONF_DIR``,
  ``-Dlog4j2.configurationFile``) is never touched.
* **Stage bars.**  ``spark.ui.showConsoleProgress`` is given as ``false`` (``true`` with
  ``--verbose``) unless the user set it (``PYSPARK_SUBMIT_ARGS``, ``spark-defaults.conf``); under
  ``spark-submit`` only ``--verbose`` sets it (spark-submit's default for a script is off).
* **The JVM's own notice.**  Spark 4's launcher always adds ``--add-modules=jdk.incubator.vector``,
  and the JVM then prints ``WARNING: Using incubator modules: jdk.incubator.vector`` to stderr at
  start-up; no JVM option silences it (JDK 17: ``-XX:-PrintWarnings``, ``-Xlog:disable`` do not).  A
  driver JVM launched here has its stderr passed through :class:`StderrFilter`, which drops that
  line and lets everything else through as it comes.  Under ``spark-submit`` the JVM is not
  ours: its console is spark-submit's.

The jobs' own lines: :class:`LiveLine` (the one ``\\r``-rewritten line on a terminal, which the
JVM's stderr clears before it writes), :class:`StageLines` (the corpus job's and select's stage
lines), :func:`format_duration` and :func:`format_rate` (also for the run's progress line,
:mod:`contentx_udf.spark.progress`).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

#: The environment variable conf/log4j2.properties reads for the level of Spark's loggers.
LOG_LEVEL_ENV = "CONTENTX_SPARK_LOG_LEVEL"
#: Its value with ``--verbose`` (Spark's own level for an interactive shell).
VERBOSE_LOG_LEVEL = "warn"
#: The Spark setting of the ``[Stage 0:>   (0 + 1) / 1]`` bars.
PROGRESS_BAR_KEY = "spark.ui.showConsoleProgress"

#: Lines of the JVM's stderr dropped at the default level (their start): the JVM's notice of
#: incubator modules, which no option turns off.
NOISE = (b"WARNING: Using incubator modules:",)


def user_setting(key: str, environ: Mapping[str, str], conf_dir: Path) -> bool:
    """True when the user set Spark setting ``key`` for the JVM this process launches: in
    ``PYSPARK_SUBMIT_ARGS`` or in ``conf_dir/spark-defaults.conf`` (outside a comment)."""
    if key in environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    try:
        defaults = (conf_dir / "spark-defaults.conf").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.split("#", 1)[0].split()[:1] == [key] for line in defaults.splitlines())


def quiet_settings(
    verbose: bool, launching: bool, environ: Mapping[str, str], conf_dir: Path
) -> dict[str, str]:
    """The Spark settings of the console for a session this process creates: the stage bars off
    (on with ``verbose``) unless the user chose; ``launching``: this process launches the JVM
    (else spark-submit did, and only ``verbose`` changes anything)."""
    if verbose:
        return {PROGRESS_BAR_KEY: "true"}
    if not launching or user_setting(PROGRESS_BAR_KEY, environ, conf_dir):
        return {}
    return {PROGRESS_BAR_KEY: "false"}


def log_level_environ(verbose: bool, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the JVM is launched with for Spark's log level: ``warn`` with ``verbose``
    unless the user chose a level (:data:`LOG_LEVEL_ENV`); nothing otherwise (conf/log4j2.properties'
    default is ``error``)."""
    if verbose and not environ.get(LOG_LEVEL_ENV):
        return {LOG_LEVEL_ENV: VERBOSE_LOG_LEVEL}
    return {}


class StderrFilter:
    """Drops the lines of a byte stream that start with one of ``noise`` (:data:`NOISE`) and passes
    everything else on at once: a partial line is held back only while it could still become a
    noise line, so a ``\\r``-updated line (a progress bar) is not delayed to its end."""

    def __init__(self, noise: tuple[bytes, ...] = NOISE):
        self.noise = noise
        self._held = b""  # the start of a line that may still become noise
        self._dropping = False  # inside a noise line, up to its newline
        self._line_start = True  # the next byte starts a line

    def feed(self, data: bytes) -> bytes:
        """What to write of ``data`` (and of what was held back)."""
        out = bytearray()
        data, self._held = self._held + data, b""
        position = 0
        while position < len(data):
            end = data.find(b"\n", position)
            line = data[position:] if end < 0 else data[position : end + 1]
            if self._line_start and not self._dropping:
                if any(line.startswith(n) for n in self.noise):
                    self._dropping = True
                elif end < 0 and any(n.startswith(line) for n in self.noise):
                    self._held = line  # too short to tell yet
                    return bytes(out)
            if not self._dropping:
                out += line
            if end < 0:
                self._line_start = False
                break
            self._dropping = False
            self._line_start = True
            position = end + 1
        return bytes(out)

    def flush(self) -> bytes:
        """What is held back at the end of the stream (an unfinished line that was no noise)."""
        held, self._held = self._held, b""
        return b"" if self._dropping else held


def forward(source, target_fd: int, filter_: StderrFilter) -> threading.Thread:
    """A daemon thread copying ``source`` (a pipe's binary file) to ``target_fd`` through
    ``filter_``, as the bytes arrive; it ends when the pipe closes."""

    def copy() -> None:
        fd = source.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            data = filter_.feed(chunk)
            if data:
                with LiveLine.lock:  # (a progress line on the terminal is cleared first)
                    LiveLine.clear()
                    _write(target_fd, data)
        _write(target_fd, filter_.flush())

    thread = threading.Thread(target=copy, name="contentx-jvm-stderr", daemon=True)
    thread.start()
    return thread


def _write(fd: int, data: bytes) -> None:
    while data:
        try:
            written = os.write(fd, data)
        except OSError:
            return  # (our stderr is gone: nothing to tell)
        data = data[written:]


def launch_gateway(conf, verbose: bool):
    """Launch the driver JVM (pyspark's :func:`pyspark.java_gateway.launch_gateway`, given
    ``conf``) with its stderr through :class:`StderrFilter`, or as it is with ``verbose``."""
    from subprocess import PIPE

    from pyspark.java_gateway import launch_gateway as pyspark_launch

    if verbose:
        return pyspark_launch(conf)
    gateway = pyspark_launch(conf, popen_kwargs={"stderr": PIPE})
    forward(gateway.proc.stderr, 2, StderrFilter())
    return gateway


def format_duration(seconds: float) -> str:
    """``45 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def format_rate(per_second: float) -> str:
    """``1,204/s``; one decimal under 10 (``2.5/s``)."""
    return f"{per_second:.1f}/s" if per_second < 10 else f"{per_second:,.0f}/s"


class LiveLine:
    """The one line rewritten in place (``\\r``) on a terminal, shared by the jobs' progress lines and
    the driver JVM's stderr (:func:`forward`): whoever writes whole lines clears it first, so an
    error line never lands at the end of a progress line (the next tick draws it again below)."""

    lock = threading.RLock()
    _shown = 0
    _stream: TextIO | None = None

    @classmethod
    def show(cls, stream: TextIO, line: str, end: str = "") -> None:
        """Draw ``line`` (cut to the terminal's width) over the live line; ``end="\\n"`` keeps it."""
        line = line[: shutil.get_terminal_size((100, 24)).columns - 1]
        with cls.lock:
            stream.write("\r" + line + " " * max(0, cls._shown - len(line)) + end)
            stream.flush()
            cls._shown, cls._stream = (0, None) if end else (len(line), stream)

    @classmethod
    def clear(cls) -> None:
        """Blank the live line, if one is shown, and put the cursor at its start."""
        with cls.lock:
            if cls._shown and cls._stream is not None:
                cls._stream.write("\r" + " " * cls._shown + "\r")
                cls._stream.flush()
            cls._shown, cls._stream = 0, None


class StageLines:
    """A job's stage lines on stderr, ``with StageLines("contentx corpus") as say: ... say("first pass
    written")``: each finished stage one line, ``NAME: STAGE (1 min 05 s)`` (the time since the
    start); on a terminal, below them, one live line ``NAME: working, 1 min 12 s`` rewritten every
    ``interval`` seconds while the next stage runs, and cleared at the end."""

    def __init__(
        self, name: str, out: TextIO | None = None, terminal: bool | None = None, interval: float = 1.0
    ):
        self.name = name
        self.out = out
        self.terminal = terminal
        self.interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.perf_counter()

    def __enter__(self) -> StageLines:
        self._started = time.perf_counter()
        if self.terminal is None:
            self.terminal = bool(getattr(self._stream(), "isatty", lambda: False)())
        if self.terminal:
            self._thread = threading.Thread(target=self._tick, name="contentx-stages", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            if self.terminal:
                LiveLine.clear()

    def __call__(self, stage: str) -> None:
        with self._lock:
            if self.terminal:
                LiveLine.clear()
            print(f"{self.name}: {stage} ({self._elapsed()})", file=self._stream(), flush=True)

    def _elapsed(self) -> str:
        return format_duration(time.perf_counter() - self._started)

    def _stream(self) -> TextIO:
        return self.out or sys.stderr

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                if self._stop.is_set():
                    return
                LiveLine.show(self._stream(), f"{self.name}: working, {self._elapsed()}")


def add_verbose_flag(parser) -> None:
    """``--verbose`` on a job command's parser."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show Spark's own console output: its warnings and stage progress bars (default: "
        "errors only, and contentx's progress line)",
    )
