"""The manual (docs/, MkDocs) and the README stay true to the code.

The command reference is generated from the argparse parsers at build time (docs/hooks/reference.py);
these tests read the parsers themselves and check that every option of every command is in what the
hook renders, that every page is in the navigation, and that the README, the front door, stays
short, links only to what exists and quotes the manual's figures. `./dev.sh docs` builds the site in
strict mode (broken links and anchors fail it); this file needs no MkDocs.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from contentx_udf import cli
from contentx_udf.corpus.config import build_parser as corpus_parser
from contentx_udf.corpus.export import build_parser as export_parser
from contentx_udf.corpus.select import build_parser as select_parser
from contentx_udf.corpus.train_quality import build_parser as train_quality_parser
from contentx_udf.spark.config import build_parser as job_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """`contentx`'s subcommands read from its own parser; run and corpus from their jobs' parsers."""
    parser = cli._build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    jobs = {
        "run": job_parser(),
        "corpus": corpus_parser(),
        "select": select_parser(),
        "train-quality": train_quality_parser(),
        "export": export_parser(),
    }
    return {name: jobs.get(name, p) for name, p in sub.choices.items()}


def _sections(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## `contentx ([a-z-]+)`$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_reference_has_a_section_for_every_command():
    commands = _subcommands()
    assert {"run", "corpus", "select", "evaluate", "extract", "train"} <= set(commands)
    assert list(cli.command_parsers()) == list(commands)
    assert set(_sections(_hook().render())) == set(commands)


def test_the_references_command_list_names_every_command():
    """The hand-written list at the top of docs/reference.md (the generated sections follow it)
    has a line for every command of the parser, those added later too, with its required
    options; its links to other pages point at headings that exist."""
    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    block = text.split("## Command line\n\n```\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.startswith("contentx ")]
    assert {line.split()[1] for line in lines} == set(cli.command_parsers())
    for name, parser in _subcommands().items():
        required = [a.option_strings[0] for a in parser._actions if a.required and a.option_strings]
        assert any(all(f" {o} " in line for o in required) for line in lines if line.split()[1] == name), name
    intro = text.split("```", 2)[2].split("<!-- contentx-reference -->", 1)[0]
    links = re.findall(r"\]\(([a-z-]+\.md)(?:#([^)]+))?\)", intro)
    assert {target for target, _ in links} >= {"corpus.md", "quality-models.md", "curation.md"}
    for target, anchor in links:
        assert (DOCS / target).exists(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (DOCS / target).read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, f"{target}#{anchor}"


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_option_of_the_command_is_in_the_reference(name):
    parser = _subcommands()[name]
    section = _sections(_hook().render())[name]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    assert actions
    for action in actions:
        names = action.option_strings or [action.metavar or action.dest]
        row = next((r for r in rows if all(n in r.split("|")[1] for n in names)), None)
        assert row is not None, f"contentx {name}: {names} missing from the reference"
        if action.help:  # its help, as the page reads once Markdown's escapes are undone
            first_words = " ".join(action.help.split()[:3]).split("%")[0]
            assert first_words in html.unescape(row.replace("\\", "")), (name, names, row)
        if action.required:
            assert "required" in row
        elif action.default not in (None, False, [], argparse.SUPPRESS):
            assert f"`{action.default}`" in row, (name, names, row)
        for choice in action.choices or ():
            assert str(choice) in row


def test_no_page_has_a_hand_written_option_table():
    """Options are described by the parsers alone: a table row starting with an option is the
    drift the generated reference replaced."""
    for page in DOCS.glob("*.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            assert not line.startswith("| `--"), f"{page.name}: {line}"
    assert _hook().MARKER in (DOCS / "reference.md").read_text(encoding="utf-8")


def test_the_output_ownership_rule_is_in_the_manual_and_the_help():
    """``--overwrite`` and ``--resume`` act only on an output contentx wrote (runtime/store.py's
    check_owned): docs/failures.md states the rule with every marker the code recognises, the pages
    that describe ``--overwrite`` link to it (anchors checked here too: mkdocs is not in the test
    environment), and each command's option help says so."""
    from contentx_udf.runtime.store import OWNER_MARKERS

    failures = (DOCS / "failures.md").read_text(encoding="utf-8")
    heading = "## Replacing an output: only what contentx wrote"
    section = failures.split(heading, 1)[1].split("\n## ", 1)[0]
    flat = " ".join(section.split())
    for marker in OWNER_MARKERS:
        assert f"`{marker}" in flat, marker
    for command in ("run", "corpus", "select", "export"):
        assert f"`{command}`" in flat or f"`contentx {command}`" in flat, command
    assert "one line naming a foreign file" in flat and "nothing in it is touched" in flat
    link = f"failures.md#{_slug(heading[3:])}"
    for page in ("extraction.md", "corpus.md", "curation.md"):
        assert link in (DOCS / page).read_text(encoding="utf-8"), page
    for name in ("run", "corpus", "select", "export"):
        helps = {a.option_strings[0]: a.help for a in _subcommands()[name]._actions if a.option_strings}
        for option in ("--overwrite", "--resume") if name == "run" else ("--overwrite",):
            assert "a folder holding other files is refused" in helps[option], (name, option)


def _nav_files(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def test_every_page_is_in_the_navigation_once():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    assert sorted(nav) == sorted(p.name for p in DOCS.glob("*.md"))
    assert config["strict"] is True
    assert any(Path(h).resolve() == DOCS / "hooks" / "reference.py" for h in config["hooks"])


def _slug(heading: str) -> str:
    """Python-Markdown's toc slug (what MkDocs links to): lowercase, punctuation out, spaces to -."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_readme_is_the_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # its quick start: the two commands are tasks of dev.sh
    tasks = re.findall(r"^    ([a-z]+)\)$", (ROOT / "dev.sh").read_text(encoding="utf-8"), flags=re.M)
    for command in re.findall(r"^\./dev\.sh (\w+)", text, flags=re.M):
        assert command in tasks
    assert {"test", "sample"} <= set(re.findall(r"^\./dev\.sh (\w+)", text, flags=re.M))
    # every relative link exists, anchors included; every page of the manual is linked
    links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", text)
    assert links
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, f"{target}#{anchor}"
    linked = {Path(t).name for t, _ in links if t.startswith("docs/")}
    assert linked >= {p.name for p in DOCS.glob("*.md")} - {"index.md"}


def test_headline_figures_are_the_manuals():
    """Every figure of the README's headline tables is quoted from a page of the manual."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Headline figures")
    section = text[start : text.index("\n## ", start + 1)]
    manual = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in DOCS.glob("*.md"))
    figures = [
        figure
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| |")
        for cell in line.split("|")[2:]
        for figure in re.findall(r"\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+", cell)
    ]
    assert len(figures) >= 15
    for figure in figures:
        assert figure in manual, figure


def _column_table(page: str, heading: str) -> list[tuple[list[str], list[str]]]:
    """(columns, types) of each row of the first `| column | type |` table after `heading`."""
    text = (DOCS / page).read_text(encoding="utf-8")
    lines = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| column | type |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        columns = re.findall(r"`([a-z_]+)`", cells[0])
        types = [t.strip().strip("`") for t in cells[1].split(", ")]
        rows.append((columns, types * len(columns) if len(types) == 1 else types))
    return rows


def test_the_schemas_page_lists_every_column_with_its_type():
    from contentx_udf.corpus.schema import DOCUMENT_COLUMNS, TOKEN_COLUMN
    from contentx_udf.spark.worker import OUTPUT_COLUMNS

    table = _column_table("schemas.md", "## The extraction table")
    documented = {c: t for columns, types in table for c, t in zip(columns, types, strict=True)}
    assert documented == dict(OUTPUT_COLUMNS)
    corpus = _column_table("schemas.md", "## The corpus")
    assert [c for columns, _ in corpus for c in columns] == [*DOCUMENT_COLUMNS, TOKEN_COLUMN]
