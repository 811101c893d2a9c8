"""The manual's command reference, generated from the argparse parsers when the site is built.

An MkDocs hook (``hooks:`` in ``mkdocs.yml``): ``docs/reference.md`` holds the marker
``<!-- contentx-reference -->``, which ``on_page_markdown`` replaces by ``render()``: one section per
``contentx`` subcommand (``contentx_udf.cli.command_parsers``: ``run`` and ``corpus`` are their jobs'
own parsers), its usage line and a table of every option with its default and help, group by group.
The parsers are the one source of truth; ``tests/test_docs.py`` checks that every option of every
command appears. Nothing here imports MkDocs, so the tests import this file without it.
"""

from __future__ import annotations

import argparse
import html
import re

from contentx_udf.cli import PROG, command_parsers

MARKER = "<!-- contentx-reference -->"

#: other ways to start the same job, shown under its heading
ALSO = {
    "run": "`python jobs/extract_warc.py` and `spark-submit jobs/extract_warc.py` run the same job.",
    "corpus": "`python jobs/build_corpus.py` and `spark-submit jobs/build_corpus.py` run the same job.",
    "select": "`python jobs/select_corpus.py` and `spark-submit jobs/select_corpus.py` run the same job.",
    "train-quality": "`python jobs/train_quality.py` and `spark-submit jobs/train_quality.py` run the same "
    "job.",
}


def _cell(text: str) -> str:
    """Help text as one Markdown table cell: one line, pipes escaped; outside `code` spans HTML and
    Markdown's emphasis, brace (attribute list) and bracket characters escaped, so that
    ``__label__`` or ``{method, title}`` read as written."""
    parts = " ".join(text.split()).split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        plain = html.escape(parts[i], quote=False)
        parts[i] = re.sub(r"([\\*_{}\[\]])", r"\\\1", plain)
    if len(parts) % 2 == 0:  # an unpaired backtick: no code span
        return _cell(text.replace("`", "'"))
    return "`".join(parts).replace("|", "\\|")


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return "off" if action.default is False else "on"
    if action.default in (None, argparse.SUPPRESS) or action.default == []:
        return ""
    return f"`{action.default}`"


def _options_table(parser: argparse.ArgumentParser, actions: list[argparse.Action]) -> list[str]:
    formatter = parser._get_formatter()
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for action in actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        invocation = formatter._format_action_invocation(action)
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| `{_cell(invocation)}` | {_default(action)} | {_cell(help_text)} |")
    return rows if len(rows) > 2 else []


def command_section(name: str, parser: argparse.ArgumentParser) -> str:
    """The Markdown of one subcommand: heading, description, usage, one options table per group."""
    parser.prog = f"{PROG} {name}"
    out = [f"## `{PROG} {name}`", ""]
    if parser.description:
        out += [_cell(parser.description), ""]
    if name in ALSO:
        out += [ALSO[name], ""]
    out += ["```", parser.format_usage().strip(), "```", ""]
    for group in parser._action_groups:
        rows = _options_table(parser, group._group_actions)
        if not rows:
            continue
        title = group.title or "options"
        out += [f"**{_cell(title)}**", "", *rows, ""]
    return "\n".join(out)


def render() -> str:
    """The whole generated reference: a list of the commands, then one section each."""
    parsers = command_parsers()
    # the two jobs first: most readers come for their options
    parsers = {**{n: parsers[n] for n in ALSO if n in parsers}, **parsers}
    out = ["| command | what it does |", "|---|---|"]
    for name, parser in parsers.items():
        summary = (parser.description or "").split(". ")[0].rstrip(".")
        out.append(f"| [`{PROG} {name}`](#{PROG}-{name}) | {_cell(summary)} |")
    out.append("")
    out += [command_section(name, parser) for name, parser in parsers.items()]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs hook signature)
    """MkDocs event: fill the reference page's marker."""
    if MARKER in markdown:
        return markdown.replace(MARKER, render())
    return markdown
