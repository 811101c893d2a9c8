"""HTML tag sets and Lexbor tag ids shared by the document views and the extractors."""

from __future__ import annotations

import numpy as np
from selectolax.lexbor import LexborHTMLParser

#: Elements removed with their content before anything is measured.
REMOVED_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "applet",
    "canvas",
    "svg",
    "math",
    "head",
)

#: Elements hidden in the markup (the CETD paper names hidden text as its main precision loss).
HIDDEN_SELECTOR = (
    '[hidden], [style*="display:none" i], [style*="display: none" i], '
    '[style*="visibility:hidden" i], [style*="visibility: hidden" i], [type="hidden"]'
)

#: Block-level elements: their boundaries become line breaks in the output text.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body br caption center dd details dialog div dl dt
    fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 header hgroup hr
    legend li main menu nav ol option p pre section summary table tbody td tfoot th thead tr
    ul textarea select""".split()
)

#: Void elements (no end tag in the serialisation).
VOID_TAGS = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())

#: Elements whose end tag HTML allows to omit (not counted when bounding nesting depth).
OPTIONAL_END_TAGS = frozenset(
    "p li dt dd option optgroup tr td th tbody thead tfoot colgroup caption rb rt rtc rp".split()
)

_TAG_IDS_SAMPLE = (
    "<html><head><title></title><base><link><meta></head><body>"
    + "".join(
        f"<{t}></{t}>"
        for t in """a abbr address article aside audio b bdi bdo blockquote button canvas
        center cite code data datalist dd del details dfn dialog div dl dt em embed fieldset
        figcaption figure font footer form h1 h2 h3 h4 h5 h6 header hgroup i iframe ins kbd
        label legend li main map mark menu meter nav noscript object ol optgroup option output
        p picture pre progress q s samp section select small span strike strong sub summary
        sup svg template textarea time tt u ul var video math big marquee nobr""".split()
    )
    + "<br><hr><img><input><wbr><area><param><source><track><keygen>"
    + "<table><caption></caption><colgroup><col></colgroup><thead><tr><th></th></tr></thead>"
    + "<tbody><tr><td></td></tr></tbody><tfoot></tfoot></table></body></html>"
)


def _build_tag_ids() -> dict[str, int]:
    tree = LexborHTMLParser(_TAG_IDS_SAMPLE)
    ids = {node.tag: node.tag_id for node in tree.root.traverse()}
    ids.update({"frame": ids.get("frame", -100), "frameset": ids.get("frameset", -101)})
    return ids


#: Lexbor tag id of each standard HTML tag name.
TAG_IDS: dict[str, int] = _build_tag_ids()
TEXT_TAG_ID = 2
COMMENT_TAG_ID = 4


def tag_ids(names) -> np.ndarray:
    """Lexbor tag ids of the given tag names (unknown names are left out)."""
    return np.array(sorted({TAG_IDS[n] for n in names if n in TAG_IDS}), dtype=np.int64)
