"""Page pieces and DOM look-ups shared by the DOM-based method tests (CETD, CoreEx)."""

from __future__ import annotations

from pathlib import Path

from contentx_udf.page.document import TAG_IDS

#: Eight article paragraphs of ~170 characters each.
ARTICLE = [
    f"Paragraph {i}: the council approved the new budget after a long debate about schools, roads "
    f"and the library, and the mayor said the plan would be reviewed again next spring."
    for i in range(8)
]
#: A navigation list of twelve links.
NAV = "<ul>" + "".join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(12)) + "</ul>"


def element_indices(dom, name: str) -> list[int]:
    """The nodes of ``dom`` with tag ``name``, in document order (a plain loop, not has_tag)."""
    return [i for i in range(dom.size) if dom.tag_id[i] == TAG_IDS[name]]


def assert_not_failed(result) -> None:
    """``result`` (an Extraction) is no error: ``ok`` with some text, or ``empty`` with none and a reason.

    The degenerate-page tests use it: a page with no text, or one a method finds no content in, is
    ``empty`` (core._run), never ``ok`` with an empty text.
    """
    assert result.status in ("ok", "empty"), (result.method, result.error)
    assert isinstance(result.text, str)
    empty = not result.text.strip()
    assert (result.status == "empty") == empty, (result.method, result.status, result.text[:80])
    assert (result.error is not None) == (result.status == "empty"), (result.method, result.error)


def write_pairs(root: Path, pages: dict[str, tuple[str, str]]) -> None:
    """A gold set in the plain layout: ``NAME.html`` + ``NAME.txt`` for every ``(html, text)``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, (html, text) in pages.items():
        (root / f"{name}.html").write_text(html, encoding="utf-8")
        (root / f"{name}.txt").write_text(text, encoding="utf-8")
