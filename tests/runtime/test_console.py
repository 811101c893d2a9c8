"""The quiet console (contentx_udf.runtime.console), without Spark: the JVM's stderr filter, the
console settings and who decides them, the live line, the corpus job's stage lines."""

from __future__ import annotations

import io
import os
import re
import time
from pathlib import Path

from contentx_udf.runtime import console

REPO = Path(__file__).resolve().parents[2]
INCUBATOR = b"WARNING: Using incubator modules: jdk.incubator.vector\n"


def filtered(*chunks: bytes) -> bytes:
    f = console.StderrFilter()
    return b"".join(f.feed(c) for c in chunks) + f.flush()


def test_the_incubator_notice_is_dropped_however_the_pipe_cuts_it():
    rest = b"05:20:42 ERROR TaskSetManager: Task 0 in stage 0.0 failed 3 times; aborting job\n"
    stream = INCUBATOR + rest
    for cut in range(1, len(stream)):
        assert filtered(stream[:cut], stream[cut:]) == rest, cut
    assert filtered(*(bytes([b]) for b in stream)) == rest  # a byte at a time


def test_everything_else_passes_as_it_comes():
    f = console.StderrFilter()
    # a partial line that cannot become the notice is written at once (a \r-updated bar is not held)
    assert f.feed(b"\r[Stage 0:>   (0 + 1) / 1]") == b"\r[Stage 0:>   (0 + 1) / 1]"
    # the notice's words inside a line, or another JVM warning, are not the notice
    assert f.feed(b"\rWARNING: Using incubator modules: x\n") == b"\rWARNING: Using incubator modules: x\n"
    assert f.feed(b"WARNING: An illegal reflective access\n") == b"WARNING: An illegal reflective access\n"
    # a start that might be the notice is held until it can tell, then given back
    assert f.feed(b"WARN") == b""
    assert f.feed(b" SparkContext: x\n") == b"WARN SparkContext: x\n"
    assert f.feed(b"WARNING: Using") == b""
    assert f.flush() == b"WARNING: Using"  # the stream ended: what was held is not lost


def test_forward_copies_a_pipe_through_the_filter(tmp_path):
    read_end, write_end = os.pipe()
    target = tmp_path / "stderr"
    with open(target, "wb") as out, os.fdopen(read_end, "rb") as source:
        thread = console.forward(source, out.fileno(), console.StderrFilter())
        os.write(write_end, INCUBATOR + b"Exception in thread main\n")
        os.close(write_end)
        thread.join(timeout=10)
    assert target.read_bytes() == b"Exception in thread main\n"


def test_stage_bars_are_off_unless_verbose_or_the_users_choice(tmp_path):
    key = console.PROGRESS_BAR_KEY
    assert console.quiet_settings(False, True, {}, tmp_path) == {key: "false"}
    assert console.quiet_settings(True, True, {}, tmp_path) == {key: "true"}
    # spark-submit launched the JVM: its settings stand, --verbose still asks for the bars
    assert console.quiet_settings(False, False, {}, tmp_path) == {}
    assert console.quiet_settings(True, False, {}, tmp_path) == {key: "true"}
    # the user's own setting, in PYSPARK_SUBMIT_ARGS or spark-defaults.conf, is kept
    submit = {"PYSPARK_SUBMIT_ARGS": f"--conf {key}=true pyspark-shell"}
    assert console.quiet_settings(False, True, submit, tmp_path) == {}
    (tmp_path / "spark-defaults.conf").write_text(f"# {key} false (a comment)\nspark.master local[2]\n")
    assert console.quiet_settings(False, True, {}, tmp_path) == {key: "false"}
    (tmp_path / "spark-defaults.conf").write_text(f"spark.master local[2]\n{key}   true\n")
    assert console.quiet_settings(False, True, {}, tmp_path) == {}


def test_the_repositorys_spark_defaults_leave_the_bars_to_the_job():
    assert not console.user_setting(console.PROGRESS_BAR_KEY, {}, REPO / "conf")


def test_log_level_errors_only_by_default_warnings_with_verbose():
    assert console.log_level_environ(False, {}) == {}
    assert console.log_level_environ(True, {}) == {console.LOG_LEVEL_ENV: "warn"}
    assert console.log_level_environ(True, {console.LOG_LEVEL_ENV: "info"}) == {}  # the user's own
    # conf/log4j2.properties reads the variable, errors only without it, for every level it sets
    # that is not pinned on purpose (hadoop, parquet, ... stay at error; the executor's stack off)
    text = (REPO / "conf" / "log4j2.properties").read_text()
    levels = dict(re.findall(r"^(\S+)\.level\s*=\s*(\S+)", text, re.M))
    variable = f"${{env:{console.LOG_LEVEL_ENV}:-error}}"
    assert levels["rootLogger"] == variable
    assert levels["logger.gateway"] == variable  # (Spark's shell level: else "Setting default log level")
    assert set(levels.values()) <= {variable, "error", "off"}


def test_every_job_command_takes_verbose():
    from contentx_udf import commands

    for name in commands.JOBS:  # (each launches Spark: --verbose gives its console back)
        assert "--verbose" in commands.parser_of(name).format_help(), name


def test_verbose_reaches_the_jobs_configuration():
    from contentx_udf.corpus.config import build_parser as corpus_parser
    from contentx_udf.corpus.select import build_parser as select_parser
    from contentx_udf.spark.config import build_config
    from contentx_udf.spark.config import build_parser as run_parser

    args = run_parser().parse_args(["--input", "x.warc.gz", "--output", "out", "--verbose"])
    assert build_config(args).verbose is True
    assert build_config(run_parser().parse_args(["--input", "x.warc.gz", "--output", "o"])).verbose is False
    assert corpus_parser().parse_args(["--input", "t", "--output", "o", "--verbose"]).verbose is True
    assert select_parser().parse_args(["--from", "c", "--output", "o", "--verbose"]).verbose is True


def test_durations_and_rates():
    assert console.format_duration(0.4) == "0 s"
    assert console.format_duration(59.6) == "1 min 00 s"
    assert console.format_duration(185) == "3 min 05 s"
    assert console.format_duration(7620) == "2 h 07 min"
    assert console.format_rate(2.54) == "2.5/s"
    assert console.format_rate(1204.4) == "1,204/s"


# --- the corpus job's and select's stage lines ----------------------------------------------


def test_stage_lines_one_line_per_stage_when_not_a_terminal():
    out = io.StringIO()
    with console.StageLines("contentx select", out=out) as say:
        say("re-cut planned")
        say("documents written")
    assert (
        out.getvalue() == "contentx select: re-cut planned (0 s)\ncontentx select: documents written (0 s)\n"
    )


def test_stage_lines_on_a_terminal_a_live_line_between_stages_cleared_at_the_end():
    out = io.StringIO()
    with console.StageLines("contentx corpus", out=out, terminal=True, interval=0.01) as say:
        time.sleep(0.1)
        say("first pass written (filters)")
        time.sleep(0.1)
    text = out.getvalue()
    before, after = text.split("contentx corpus: first pass written (filters) (0 s)\n")
    live = "\rcontentx corpus: working, 0 s"
    assert before.startswith(live) and before.endswith("\r")  # the live line, cleared for the stage
    assert after.startswith(live) and after.endswith("\r") and after.rstrip("\r ").endswith("0 s")
    assert "\n" not in after  # nothing left on the line below the stages


def test_a_jvm_line_clears_the_live_line_first(tmp_path):
    """An error line from the JVM never lands at the end of a progress line on the terminal."""
    terminal = io.StringIO()
    console.LiveLine.show(terminal, "contentx run: files 0/2 done, records 0 (0.0/s), 3 s")
    read_end, write_end = os.pipe()
    with open(tmp_path / "stderr", "wb") as out, os.fdopen(read_end, "rb") as source:
        thread = console.forward(source, out.fileno(), console.StderrFilter())
        os.write(write_end, b"ERROR TaskSetManager: Task 0 in stage 0.0 failed 3 times\n")
        os.close(write_end)
        thread.join(timeout=10)
    shown = "\rcontentx run: files 0/2 done, records 0 (0.0/s), 3 s"
    blanked = shown + "\r" + " " * (len(shown) - 1) + "\r"
    assert terminal.getvalue() == blanked
    console.LiveLine.clear()  # nothing left to clear: nothing more written
    assert terminal.getvalue() == blanked
