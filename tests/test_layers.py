"""The package's import rules (docs/development.md, "Layers"): every import of ``contentx_udf``,
lazy ones inside functions included, goes to its own unit or a lower layer; no import circle; at
most 5 private names (``_name``) taken from another module; no module over 900 lines; no module
names a job's module but the command registry. Read from the source with ``ast``: no import runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "contentx_udf"

#: The layers, lowest first: a unit (a top-level module or subpackage of ``contentx_udf``; the
#: package's own ``__init__`` is ``""``) may import its own modules and any unit of a lower layer,
#: never one of its own layer or above.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer)
    for layer in (
        {"errors", "paths", "extensions", "models"},
        {"settings"},
        {"text", "warc"},
        {"page"},
        {"methods"},
        {"core"},
        {""},
        {"evaluation"},
        {"training"},
        {"runtime"},
        {"outputs"},
        {"spark", "corpus"},
        {"commands"},
        {"jvm_archive"},
        {"cli"},
        {"__main__"},
    )
)

#: The modules of the jobs, which only the registry (:mod:`contentx_udf.commands`) names, by string.
JOB_MODULES = {
    "contentx_udf.spark.job",
    "contentx_udf.corpus.job",
    "contentx_udf.corpus.select",
    "contentx_udf.corpus.train_quality",
    "contentx_udf.corpus.export",
}


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package ``__init__``); compiled
    ``.pyx`` modules are named (they can be imported) but not read."""
    out = {}
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


MODULES = modules()


def imports(name: str) -> Iterator[tuple[str, str | None]]:
    """``(module imported, name taken from it or None)`` for every import of module ``name``
    into the package, at any depth of its code."""
    path, is_package = MODULES[name]
    if path.suffix != ".py":
        return
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("contentx_udf"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    yield sub, None
                elif target in MODULES:
                    yield target, alias.name


GRAPH = {name: {target for target, _ in imports(name)} for name in MODULES}


def unit(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(name: str) -> int:
    return next(i for i, units in enumerate(LAYERS) if unit(name) in units)


def test_every_unit_has_a_layer():
    assert {unit(name) for name in MODULES} <= set().union(*LAYERS)


def test_imports_go_to_the_own_unit_or_a_lower_layer():
    wrong = sorted(
        (source, target)
        for source, targets in GRAPH.items()
        for target in targets
        if unit(source) != unit(target) and layer(target) >= layer(source)
    )
    assert wrong == []


def circles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    assert circles() == []


def test_the_circle_check_sees_a_circle(monkeypatch):
    monkeypatch.setitem(GRAPH, "contentx_udf.errors", {"contentx_udf.cli"})
    assert any("contentx_udf.errors" in c and "contentx_udf.cli" in c for c in circles())


def private_names_crossing() -> list[tuple[str, str, str]]:
    return sorted(
        (source, target, taken)
        for source in MODULES
        for target, taken in imports(source)
        if taken is not None and taken.startswith("_") and not taken.startswith("__") and target != source
    )


def test_at_most_five_private_names_cross_modules():
    assert len(private_names_crossing()) <= 5, private_names_crossing()


@pytest.mark.parametrize("name", sorted(n for n, (p, _) in MODULES.items() if p.suffix == ".py"))
def test_no_module_over_900_lines(name):
    assert len(MODULES[name][0].read_text(encoding="utf-8").splitlines()) <= 900


def test_only_the_registry_names_a_job():
    """``select`` reuses the build's stages through :mod:`contentx_udf.corpus.stages`, not
    :mod:`contentx_udf.corpus.job`: no job module imports another."""
    naming = sorted((source, target) for source, targets in GRAPH.items() for target in targets & JOB_MODULES)
    assert naming == []
