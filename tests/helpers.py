"""Page pieces and DOM look-ups shared by the DOM-based method tests (CETD, CoreEx)."""

from __future__ import annotations

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
