"""The compiled passes (contentx_udf/page/_compiled.pyx) give what the Python code gives: the DOM
arrays, the class/id keyword bits, the feature matrix, the template groups, the model's scores and
the kept blocks, on tricky pages and on development pages (all 181 scrapinghub pages and a seeded
sample of 150 WCXB dev pages; benchmarks/compiled_equality.py checks all 1,678)."""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import numpy as np
import pytest
from selectolax.lexbor import LexborHTMLParser

from contentx_udf import extract
from contentx_udf.evaluation import load_gold
from contentx_udf.page import compiled
from contentx_udf.page.document import (
    _DIV_TAG_ID,
    _REMOVED_TAG_TABLE,
    HIDDEN_CONTENT_DEPTH,
    HIDDEN_CONTENT_MIN_CHARS,
)

from ..conftest import SHARED as SHARED_ROOT
from ..conftest import shared_or_skip
from ..gold_sample import wcxb_sample
from ..helpers import ARTICLE, NAV
from .compiled_check import compiled_passes, differences

SHARED = SHARED_ROOT / "data"

TRICKY = (
    "<html><body class='home page' id='top' role='document'>"
    "<!-- a comment --><div class='post-content' itemprop='articleBody'>"
    + "".join(f"<p class='para'>{p}</p>" for p in ARTICLE)
    + "<!-- between --></div><aside class='Sidebar Widget'><p>Ad</p></aside>"
    f"<nav class='menü navigation' id='main-nav'>{NAV}</nav>"
    "<my-element class='card'><span>Custom element text</span></my-element>"
    "<div class=''><p>empty class</p></div><div class><p>bare class</p></div>"
    "<footer itemtype='https://schema.org/WPFooter'><p>© 2026 ﬁne print</p></footer>"
    "</body></html>"
)


def fast_module():
    """The compiled module, or a skip when the passes are off (CONTENTX_PURE_PYTHON, no build)."""
    fast = compiled.module()
    if fast is None:
        pytest.skip(f"compiled passes off: {compiled.status()}")
    return fast


def test_the_extension_is_built():
    """The install builds it (setup.py): the Python fallback is for machines without a compiler."""
    if os.environ.get("CONTENTX_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("compiled passes turned off by CONTENTX_PURE_PYTHON")
    assert compiled.status() == "compiled", compiled.status()


@pytest.mark.parametrize("max_nodes", [200_000, 40, 7, 1])
def test_tricky_page_same_as_python(max_nodes):
    assert differences(TRICKY.encode(), "https://example.org/news/2024/05/story", max_nodes=max_nodes) == []


def test_pages_without_body_text_or_with_noscript_view():
    pages = [
        b"",
        b"<html><body></body></html>",
        b"<p>no body tag</p>",
        b"<html><body><noscript>" + b"".join(f"<p>{p}</p>".encode() for p in ARTICLE * 2) + b"</noscript>"
        b"<div>Loading</div></body></html>",
    ]
    for page in pages:
        assert differences(page) == []


#: Pages at the edges of the compiled cleaning: hidden elements it decides alone and those it
#: leaves to the Python path (near <body>, React's streamed parts, a hidden <body>), the case
#: rules of Lexbor's attribute selectors, nested and foreign-content matches.
CLEANING = [
    "<html><head><script>x</script></head><body>"
    "<div><div><div hidden><p>deep hidden</p></div><p style='COLOR:red;DISPLAY: NONE'>y</p>"
    "<input TYPE='hidden'><svg><rect type='hidden'/><rect style='display:none'/></svg>"
    "<span sTyle='visibility:Hidden'>s</span><p style='display:block'>shown</p>"
    "<noscript><div hidden><p>in noscript</p></div></noscript><template><p>t</p></template>"
    "<math><mi hidden>m</mi></math><p data-hidden='1' class='hidden'>kept</p>"
    "<div style='display:none'><script>a</script><div hidden>b</div></div></div></div>"
    + "".join(f"<p>{p}</p>" for p in ARTICLE)
    + "</body></html>",
    "<html><body><div hidden><p>" + " ".join(ARTICLE * 3) + "</p></div><p>Short</p></body></html>",
    "<html><body><div><div style='display:none'><p>" + " ".join(ARTICLE) + "</p></div></div></body></html>",
    "<html><body><main><div><div hidden id='S:1'><p>" + " ".join(ARTICLE) + "</p></div></div></main>"
    "<p>x</p></body></html>",
    "<html><body hidden><p>" + " ".join(ARTICLE) + "</p></body></html>",
    "<html><body><iframe src='x'></iframe><object><p>o</p></object><embed><canvas>c</canvas>"
    "<applet>a</applet><style>p{}</style><p>text</p></body></html>",
    "<p>no body tag <script>x</script><span hidden>h</span></p>",
    "<html><body><div><div><input type='HIDDEN' value='a'><svg><rect type='HIDDEN'/></svg>"
    "</div></div><p>text</p></body></html>",
    # near <body>: 499 bytes of hidden text are too few to be the page; 600 bytes (300 characters)
    # may be, so the Python path measures them
    "<html><body><div style='display:none'>" + "x" * 499 + "</div><p>Short</p></body></html>",
    "<html><body><div style='display:none'>" + "é" * 300 + "</div><p>Short</p></body></html>",
    # three levels deep: only React's streamed parts ("S:" ids) are left to the Python path
    "<html><body><main><section><div hidden id='Sx'><p>" + " ".join(ARTICLE) + "</p></div></section>"
    "</main></body></html>",
    "<html><body><main><section><div hidden id='S:12'><p>" + " ".join(ARTICLE) + "</p></div></section>"
    "</main></body></html>",
]


@pytest.mark.parametrize("page", range(len(CLEANING)))
def test_cleaning_same_as_python(page):
    assert differences(CLEANING[page].encode()) == []


def test_the_compiled_cleaning_decides_alone_where_it_can():
    """Pages cleaned by the compiled pass alone (hidden elements three levels deep and more, short
    hidden texts near <body>) and pages it leaves to the Python path, each for its reason."""
    fast = compiled.module()
    if fast is None:
        pytest.skip(compiled.status())
    decided = []
    for page in CLEANING:
        tree = LexborHTMLParser(page.encode())
        head = tree.head.mem_id if tree.head is not None else 0
        if tree.body is not None:
            decided.append(
                fast.remove_unseen(
                    tree.body.mem_id,
                    head,
                    _REMOVED_TAG_TABLE,
                    _DIV_TAG_ID,
                    HIDDEN_CONTENT_DEPTH,
                    HIDDEN_CONTENT_MIN_CHARS,
                )
            )
    assert decided == [15, None, None, None, None, 6, 2, None, 1, None, 1, None]


def test_outputs_the_same_either_way():
    with compiled_passes(False):
        slow = extract(TRICKY, "combined")
    with compiled_passes(True):
        fast = extract(TRICKY, "combined")
    assert fast.text == slow.text and fast.text
    assert {k: v for k, v in fast.scores.items() if k != "ms"} == {
        k: v for k, v in slow.scores.items() if k != "ms"
    }


@functools.cache
def scrapinghub_gold(root: Path) -> tuple:
    """The scrapinghub gold set at ``root`` (``load_gold``), read once for the file's tests."""
    return tuple(load_gold(root))


def dev_sample() -> list:
    pages = []
    if (SHARED / "scrapinghub").exists():
        pages += scrapinghub_gold(SHARED / "scrapinghub")
    if (SHARED / "wcxb-dev").exists():
        pages += wcxb_sample(SHARED / "wcxb-dev", lambda ids: random.Random(27).sample(ids, 150))
    return pages


@pytest.mark.devset
def test_development_pages_same_as_python():
    pages = dev_sample()
    if not pages:
        pytest.skip("shared development data not present")
    failed = {p.id: d for p in pages if (d := differences(p.html, p.url))}
    assert failed == {}


CLASS_VALUES = [
    "NavBar main-Menu",
    "SIDEBAR",
    "post__content--main",
    "ad ads-top",
    "adverts sr-only",
    "=ad",
    "readnextbox x1 y2",
    "bad-address tocbot",
    "toc",
    "cookie_consent gdpr",
    "menü widget",
    "İtem",
    "\u212aomment-list",  # KELVIN SIGN: lower() makes it an ASCII "k"
    "  ",
    "comments reply-to respond",
    "content article post entry story body main text prose rich",
    "btn-primary cta",
    "product-card price",
    "x" * 300 + "share",
]


def test_keyword_bits_of_the_compiled_look_up_equal_the_python_rules():
    """Every value is new to the look-up (an empty cache): the compiled keyword tables (ASCII) and
    the Python rules (non-ASCII values) against the Python rules themselves."""
    from contentx_udf.methods import block_features as bf
    from contentx_udf.page.document import Document

    divs_html = "".join(f'<div class="{v}"><p>x</p></div>' for v in CLASS_VALUES)
    page = f"<html><body>{divs_html}</body></html>"
    doc = Document.parse(page)
    fast = bf._compiled_keywords()
    if fast is None:
        pytest.skip("compiled passes off")
    dom = doc.dom
    fast.clear_key_cache()
    bits, _ = fast.attribute_keys(doc.tree.body.mem_id, dom.size, bf._raw_value_bits, 1000)
    divs = [i for i in range(dom.size) if dom.tag_id[i] == dom.tag_id[1]]
    assert len(divs) == len(CLASS_VALUES)
    expected = [bf._text_bits(v.strip() and v) for v in CLASS_VALUES]
    assert [int(b) for b in bits[divs]] == expected
    assert expected[0] and expected[12]  # (the look-up finds something: nav, comment)
    # the same from the cache, and with a cache emptied every 3 keys (its table grown and emptied)
    for cache_size in (1000, 3):
        again, _ = fast.attribute_keys(doc.tree.body.mem_id, dom.size, bf._raw_value_bits, cache_size)
        assert again.tolist() == bits.tolist()
    many = "".join(f'<div class="x{k} nav"><p>x</p></div>' for k in range(5000))
    doc = Document.parse(f"<html><body>{many}</body></html>")
    for _ in range(2):  # (5,000 new keys, then all found)
        bits, _ = fast.attribute_keys(doc.tree.body.mem_id, doc.dom.size, bf._raw_value_bits, 10_000)
        assert set(bits[doc.dom.tag_id == dom.tag_id[1]].tolist()) == {bf._text_bits("x0 nav")}


SEARCHED = [
    "<html><body><noscript><p>a</p></noscript><NOSCRIPT class=x>B</NOSCRIPT><noscript>"
    "<p>é “quoted” 😀</p></noscript><NoScript>mixed</NoScript><noscript>unclosed</body></html>",
    "<noscript",
    "<noscript>no end",
    "<noscript >x</noscript><noscript>y</noscript></noscript>",
    '<script type="application/ld+json">{"@type":"NewsArticle","x":{"@type" :\u00a0["Person"]}}'
    '"@type"@type":"Product"</script>',
    '{"@type": "https://schema.org/Recipe"} {"@type":\u2028"Event"} "@type":"",',
    "",
]


def test_searches_in_the_utf8_bytes_find_what_str_searches_find():
    from contentx_udf.methods.blocks import noscript_html
    from contentx_udf.methods.page_signals import _JSONLD_RE, jsonld_types
    from contentx_udf.page.document import Document

    pages = [p.encode() for p in SEARCHED] + scrapinghub_pages()
    with_noscript = with_types = 0
    for page in pages:
        doc = Document.parse(page)
        assert doc.utf8 is not None and doc.utf8.decode("utf-8") == doc.html
        inner = noscript_html(doc.html, doc.utf8)
        assert inner == noscript_html(doc.html)
        types = jsonld_types(doc.html, doc.utf8)
        assert types == jsonld_types(doc.html)
        assert types == {t.lower() for t in _JSONLD_RE.findall(doc.html)}  # (the definition)
        with_noscript += bool(inner)
        with_types += bool(types)
    assert with_noscript >= 3 and with_types >= 2


def test_title_word_hits_of_the_compiled_pass_equal_the_regex():
    """The compiled word_hits (an ASCII table for \\w, a filter on length and first and last
    characters before the set look-up) counts what the regex fallback counts."""
    from contentx_udf.methods.block_features import _WORD_RE
    from contentx_udf.methods.page_signals import title_hits

    titles = [
        "Breaking: the café_owner’s 2024 plan — ünïcode Ωmega 東京 news",
        "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9 _",
        "x" * 80 + " short longer_words_with_underscores",
    ]
    rng = random.Random(7)
    alphabet = "ab_1 é東Ω-.,’\t\n\u00a0xyz0"
    texts = [
        "the café_owner's plan, cafe owner; CAFÉ_OWNER café_owner_x _café_owner news.",
        "東京 news東京 ωmega Ωmega ωmega 2024 20245 _ __ a_b",
        "x" * 80 + " " + "x" * 79 + " " + "x" * 81 + " longer_words_with_underscores",
        "",
        *("".join(rng.choice(alphabet) for _ in range(rng.randrange(60))) for _ in range(300)),
    ]
    texts = [t.lower() for t in texts]
    for title in titles:
        words = set(_WORD_RE.findall(title.lower()))
        with compiled_passes(True):
            fast = title_hits(texts, words)
        with compiled_passes(False):
            slow = title_hits(texts, words)
        assert fast.tolist() == slow.tolist()
        assert fast.sum() > 0


def test_key_groups_number_and_count_equal_keys_as_the_sorting_code():
    """The compiled key_groups (a hash table) groups what first_occurrence and np.unique group:
    the repeated-sibling counts are equal and the templates the same partition."""
    from contentx_udf.page.document import first_occurrence

    from .compiled_check import same_partition

    fast = fast_module()
    rng = np.random.default_rng(3)
    for keys in (
        np.zeros(0, dtype=np.int64),
        np.array([5], dtype=np.int64),
        np.array([-1, 0, -1, 2**63 - 1, -(2**63), 0, 2**63 - 1], dtype=np.int64),
        rng.integers(0, 40, 5000).astype(np.int64) << 40,  # (equal low bits: a weak hash collides)
        rng.integers(-(2**63), 2**63 - 1, 3000, dtype=np.int64),
    ):
        labels, sizes = fast.key_groups(keys)
        first = first_occurrence(keys)
        expected = np.bincount(first).take(first) if keys.size else np.zeros(0, dtype=np.int64)
        assert sizes.tolist() == expected.tolist()
        assert same_partition(labels, np.unique(keys, return_inverse=True)[1].reshape(-1))
        new_label = labels[1:] > np.maximum.accumulate(labels)[:-1] if keys.size else labels
        assert labels[:1].tolist() in ([], [0])  # numbered in order of first occurrence
        assert (labels[1:][new_label] == np.arange(1, new_label.sum() + 1)).all()


def test_repeated_siblings_and_templates_of_the_compiled_pass_equal_the_sorting_code():
    """On real pages (lists, cards, tables): the same repeated-sibling counts and the same
    template partition with and without the compiled passes."""
    from contentx_udf.methods import block_features as bf
    from contentx_udf.methods.blocks import page_blocks
    from contentx_udf.page.document import Document

    from .compiled_check import same_partition

    pages = [TRICKY.encode()] + scrapinghub_pages()[:60]
    repeated_pages = 0
    for page in pages:
        doc = Document.parse(page)
        dom = doc.dom
        blocks = page_blocks(dom)
        if not blocks.size:
            continue
        _, class_hash = bf._keyword_bits(doc, dom, blocks.first_node)
        parent = dom.parent0
        o = blocks.owner
        lineage = np.stack((o, parent.take(o), parent.take(parent.take(o))))
        fast = (bf._repeated_siblings(dom, class_hash), bf._templates(dom, lineage, class_hash))
        with compiled_passes(False):
            slow = (bf._repeated_siblings(dom, class_hash), bf._templates(dom, lineage, class_hash))
        assert fast[0].tolist() == slow[0].tolist()
        assert same_partition(fast[1], slow[1])
        repeated_pages += bool((fast[0] > 1).any())
    assert repeated_pages >= 2


def scrapinghub_pages() -> list[bytes]:
    """The 181 scrapinghub pages, or a skip without ../shared (the tests that count what these
    pages hold)."""
    return [p.html for p in scrapinghub_gold(shared_or_skip(SHARED / "scrapinghub"))]


def real_pages(count: int) -> list[bytes]:
    """The tricky page and the first ``count`` scrapinghub pages (when ../shared is present)."""
    pages = [TRICKY.encode()]
    if (SHARED / "scrapinghub").exists():
        pages += [p.html for p in scrapinghub_gold(SHARED / "scrapinghub")][:count]
    return pages


#: The columns the compiled pass computes with sums in another order (Gaussian smoothing).
SMOOTHED = ("ttr_smooth", "ttr_derivative", "ccb_blur", "ccb_blur_wide")


def test_block_columns_of_the_compiled_pass_equal_numpy():
    """The feature matrix written by the compiled block pass equals the numpy code's: bit for bit
    except the Gaussian smoothing's columns (and their neighbour copies), equal to 1e-12."""
    from contentx_udf.methods import block_features as bf
    from contentx_udf.methods.blocks import content_document
    from contentx_udf.page.document import Document

    smoothed = [i for i, name in enumerate(bf.FEATURE_NAMES) if name.split("@")[0] in SMOOTHED]
    exact = np.setdiff1d(np.arange(len(bf.FEATURE_NAMES)), smoothed)
    checked = with_h1 = 0
    for page in real_pages(60):
        matrices = []
        for enabled in (False, True):
            with compiled_passes(enabled):
                view, from_noscript = content_document(Document.parse(page))
                matrices.append(bf.block_features(view, noscript_view=from_noscript).matrix)
        slow, fast = matrices
        assert slow.shape == fast.shape
        assert np.array_equal(slow[:, exact], fast[:, exact])
        assert np.allclose(slow[:, smoothed], fast[:, smoothed], rtol=0.0, atol=1e-12)
        checked += slow.shape[0] > 1
        with_h1 += bool(slow[:, bf.FEATURE_NAMES.index("before_h1")].any())
    assert checked >= min(len(real_pages(60)), 20) - 1
    if len(real_pages(60)) > 1:
        assert with_h1 >= 5


def test_cetd_counts_sums_and_selection_of_the_compiled_passes_equal_numpy():
    """CETD's node counts, DensitySum and CECTD-DS selection, and the subtree argmax on values
    with many ties and with a floor, equal with and without the compiled passes."""
    from contentx_udf.methods import cetd
    from contentx_udf.page.document import Document
    from contentx_udf.settings import DEFAULTS

    rng = np.random.default_rng(27)
    for page in real_pages(40):
        dom = Document.parse(page).dom
        if dom.size == 0:
            continue
        results = []
        for enabled in (False, True):
            with compiled_passes(enabled):
                for flag in (True, False):
                    counts = cetd._node_counts(dom, flag)
                    results.append([counts.chars, counts.tags, counts.link_chars, counts.link_tags])
                density = cetd.composite_text_density(
                    counts.chars, counts.tags, counts.link_chars, counts.link_tags, counts.body_link_ratio
                )
                sums = cetd.density_sum(dom, density, counts.is_element)
                params = DEFAULTS["cectd-ds"]
                selection = cetd.extract_by_density_sum(
                    dom, density, sums, counts.is_element, block_min_sum_ratio=params["block_min_sum_ratio"],
                    prune_ratio=params["prune_ratio"],
                )  # fmt: skip
                for variant in ({"multiple_blocks": False}, {"keep_path_text": False}, {"lambda_": 0.5}):
                    other = cetd.extract_by_density_sum(dom, density, sums, counts.is_element, **variant)
                    results.append([other.text_mask, np.array([other.target, other.threshold, other.blocks])])
                tied = rng.integers(0, 4, dom.size).astype(np.float64)  # (the same draws both times)
                tied[rng.random(dom.size) < 0.2] = -np.inf
                nodes = np.arange(dom.size)
                results.append(
                    [
                        sums,
                        selection.text_mask,
                        np.array([selection.target, selection.threshold, selection.blocks, selection.pruned]),
                        cetd.subtree_argmax(dom, sums, nodes),
                        cetd.subtree_argmax(dom, tied, nodes),
                        cetd.subtree_argmax(dom, tied, nodes, floor=3.0),
                    ]
                )
            rng = np.random.default_rng(27)  # the second path draws the same values
        half = len(results) // 2
        for slow, fast in zip(results[:half], results[half:], strict=True):
            for a, b in zip(slow, fast, strict=True):
                assert np.array_equal(a, b)


def test_tree_scores_of_the_compiled_inference_equal_numpy_bit_for_bit():
    """The block model's and the page-type classifier's scores of real pages' rows, and of rows
    whose values sit exactly on the split borders (``x > border`` is false there), are the same
    floats with and without the compiled inference."""
    from contentx_udf.methods.block_features import block_features, page_features
    from contentx_udf.methods.blocks import content_document
    from contentx_udf.methods.combined import model_for
    from contentx_udf.page.document import Document
    from contentx_udf.settings import resolve_params

    model = model_for(resolve_params("combined", {}))
    matrices = []
    for page in real_pages(30):
        view, from_noscript = content_document(Document.parse(page))
        matrix = block_features(view, noscript_view=from_noscript).matrix
        if matrix.shape[0]:
            matrices.append(matrix)
    on_borders = np.zeros((5, matrices[0].shape[1]))
    on_borders[:, model.split_feature[:, 0]] = model.split_border[:, 0]
    matrices.append(on_borders)
    for matrix in matrices:
        with compiled_passes(False):
            slow = (model.raw_scores(matrix), model.page_types.raw_scores(page_features(matrix)[None]))
        fast = (model.raw_scores(matrix), model.page_types.raw_scores(page_features(matrix)[None]))
        assert slow[0].shape == (matrix.shape[0],) and slow[1].shape == (1, len(model.page_types.classes))
        assert np.array_equal(slow[0], fast[0]) and np.array_equal(slow[1], fast[1])


def test_coreex_counts_and_scores_of_the_compiled_pass_equal_numpy():
    """CoreEx's counts, set sums and scores (with and without ignoring form elements) are the same
    arrays, dtypes included, with and without the compiled pass."""
    from contentx_udf.methods.coreex import coreex_analysis
    from contentx_udf.page.document import Document
    from contentx_udf.settings import DEFAULTS

    scored = 0
    for page in real_pages(40):
        html = page.decode("utf-8", "replace")
        for ignore_form_tags in (True, False):
            params = {**DEFAULTS["coreex"], "ignore_form_tags": ignore_form_tags}
            results = []
            for enabled in (False, True):
                with compiled_passes(enabled):
                    counts, *scores = coreex_analysis(Document.parse(html).dom, params)
                arrays = (counts.text_cnt, counts.link_cnt, counts.counted, counts.is_link, counts.ignored)
                results.append([*arrays, *scores])
            for slow, fast in zip(*results, strict=True):
                assert slow.dtype == fast.dtype and np.array_equal(slow, fast)
            scored += bool(np.isfinite(results[0][5]).any())
    assert scored >= 2


UTF8_EDGES = [
    b"", b"a", b"abcdefgh", b"abcdefg\xc3\xa9", b"\xc2", b"\xc2\x80", b"\xc1\x80", b"\xe0\x9f\x80",
    b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xed\xa0\x80", b"\xef\xbf\xbf", b"\xf0\x8f\xbf\xbf",
    b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80",
    b"abcdefg\xe2\x82", b"\xe2\x82\xacabcdefghi", "\ud800".encode("utf-8", "surrogatepass"),
]  # fmt: skip


def test_utf8_check_agrees_with_the_strict_decoder():
    """The compiled check says what ``bytes.decode("utf-8")`` would: valid or not, how many
    characters, all ASCII; on the decoder's edge cases (overlong forms, surrogates, above U+10FFFF,
    cut sequences) and on random byte strings made of the bytes that start and continue them."""
    fast = fast_module()
    rng = random.Random(7)
    alphabet = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4]
    cases = UTF8_EDGES + [
        bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 20))) for _ in range(20_000)
    ]
    valid = 0
    for data in cases:
        try:
            text = data.decode("utf-8")
            expected = (True, len(text), data.isascii())
            valid += 1
        except UnicodeDecodeError:
            expected = (False, 0, False)
        assert tuple(fast.utf8_check(data)) == expected, data
    assert 100 < valid < len(cases) - 100  # (both kinds are tested)


def test_pages_not_decoded_parse_as_decoded_ones(monkeypatch):
    """A page whose bytes are valid UTF-8 that ``decode_html`` would decode as UTF-8 is parsed
    without decoding it (``Document.decoded_html`` None until ``html`` is read): the same title,
    encoding, text, bytes, notes and DOM as through ``decode_html``; other declared charsets, a
    byte-order mark, a NUL or invalid bytes take ``decode_html``."""
    from contentx_udf.page import document

    fast_module()
    pages = [
        b'<meta charset="iso-8859-1"><title>Caf\xc3\xa9</title><p>caf\xc3\xa9</p>',
        b'<meta charset="iso-8859-1"><p>cafe</p>',
        b'<meta charset="shift_jis"><p>\xc3\xa9</p>',
        b'<meta charset="utf-8"><p>\xe9</p>',
        b"\xef\xbb\xbf<p>bom</p>",
        b"<p>nul\x00</p>",
        "<div>".join(["<p>deep"] * 50).encode(),
    ]
    pages += scrapinghub_pages()

    def fields(doc):
        dom = doc.dom
        return doc.title, doc.encoding, doc.html, doc.utf8, doc.notes, dom.texts, dom.small_tag_id.tolist()

    not_decoded = 0
    for page in pages:
        for content_type in (None, "text/html; charset=windows-1252", "text/html; charset=euc-jp"):
            limits = document.Limits(max_depth=20)
            doc = document.Document.parse(page, content_type=content_type, limits=limits)
            not_decoded += doc.decoded_html is None
            fast = fields(doc)
            with monkeypatch.context() as m:
                m.setattr(document, "_valid_utf8", lambda html, content_type: None)
                slow = document.Document.parse(page, content_type=content_type, limits=limits)
            assert fast == fields(slow), (page[:80], content_type)
    assert not_decoded >= 100


def test_find_all_with_an_anchor_finds_what_memmem_finds():
    """``find_all`` finds every occurrence (overlapping ones too) whichever byte of the needle
    ``memchr`` looks for, as a slice comparison at every position does."""
    find_all = fast_module().find_all
    rng = random.Random(11)
    for _ in range(3_000):
        data = bytes(rng.choice(b'"@typ<NO') for _ in range(rng.randint(0, 40)))
        for needle in (b'"@type"', b"@@", b'"@', b"<NO", b"p"):
            expected = [i for i in range(len(data) - len(needle) + 1) if data[i : i + len(needle)] == needle]
            for anchor in range(-1, len(needle)):
                assert find_all(data, needle, anchor) == expected, (data, needle, anchor)


def test_noscript_tags_finds_what_find_all_finds():
    """``noscript_tags`` finds every place of the four ``<noscript>`` tags, as ``find_all`` does for
    each, also near the ends of the bytes and around the 16-byte steps of its vector scan."""
    fast = fast_module()
    needles = (b"<noscript", b"</noscript", b"<NOSCRIPT", b"</NOSCRIPT")
    rng = random.Random(12)
    pieces = (b"<", b"</", b"n", b"N", b"noscript", b"NOSCRIPT", b"<noscript", b"</NOSCRIPT", b"x", b"/")
    for _ in range(3_000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        data = rng.choice((b"", b"a" * rng.randint(1, 40))) + data
        assert fast.noscript_tags(data) == tuple(fast.find_all(data, needle) for needle in needles), data


def test_text_counts_and_block_texts_of_one_byte_and_wider_texts():
    """The one-byte (Latin-1) texts, read byte by byte with a table of ``str.isspace``, and the
    wider ones give ``len(t.split())``, ``len(t.strip())`` and the runs' collapsed text as Python
    does (Latin-1 spaces ``\\x1c``-``\\x1f``, ``\\x85``, ``\\xa0``; a run mixing both widths)."""
    fast = fast_module()
    rng = random.Random(13)
    latin = [
        " ",
        "\t",
        "\n",
        "\x0b",
        "\x0c",
        "\r",
        "\x1c",
        "\x1f",
        "\x85",
        "\xa0",
        "a",
        "B",
        "\xe9",
        "\xff",
        ".",
    ]
    wide = latin + ["\u2003", "\u3000", "x\u0101", "\U0001f600"]
    for _ in range(2_000):
        alphabet = latin if rng.random() < 0.7 else wide
        texts = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 9))
        ]
        words, stripped = fast.text_counts(texts)
        assert words.tolist() == [len(t.split()) for t in texts]
        assert stripped.tolist() == [len(t.strip()) for t in texts]
        seq = np.array(sorted(rng.randint(0, 3) for _ in texts), dtype=np.int64)
        runs = [
            "".join(t for t, s in zip(texts, seq.tolist(), strict=True) if s == v)
            for v in sorted(set(seq.tolist()))
        ]
        got = fast.block_texts(texts, np.arange(len(texts), dtype=np.int64), seq)
        assert got == [" ".join(run.split()) for run in runs]


def test_page_blocks_of_the_compiled_runs_equal_the_numpy_steps():
    """``block_runs`` (one compiled pass over the text nodes' block numbers and stripped lengths)
    gives the blocks numpy's steps give: block of every text node, first node, owner and text, on
    the tricky page, blank blocks and the scrapinghub pages."""
    from contentx_udf.methods.blocks import content_document, page_blocks
    from contentx_udf.page.document import Document

    fast_module()
    pages = [TRICKY.encode(), b"", b"<p> </p>", b"<p>a</p><div> \n</div><p>b<b> </b></p><p>\xc2\xa0</p>"]
    if (SHARED / "scrapinghub").exists():
        pages += [p.html for p in scrapinghub_gold(SHARED / "scrapinghub")]
    for page in pages:
        view, _ = content_document(Document.parse(page))
        dom = view.dom
        fast = page_blocks(dom)
        with compiled_passes(False):
            slow = page_blocks(dom)
        for name in ("text_block", "first_node", "owner"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
            assert getattr(fast, name).dtype == getattr(slow, name).dtype
        assert fast.texts == slow.texts


def test_non_space_chars_of_the_compiled_count_equal_the_byte_deletion():
    """The compiled count of visible characters (none of " \\n\\t\\r\\f\\v" and the no-break
    space) equals the count from the UTF-8 bytes, on one-byte, two-byte and four-byte strings
    (lone surrogates included) and on the scrapinghub pages' text."""
    from contentx_udf.page import document

    fast_module()
    rng = random.Random(17)
    alphabet = [" ", "\n", "\t", "\r", "\x0c", "\x0b", "\xa0", "a", "\xe9", "\x85", "\u2003", "\u3000"]
    alphabet += ["\U0001f600", "\x1c", "\ud800"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) for _ in range(5_000)]
    if (SHARED / "scrapinghub").exists():
        texts += [
            document.Document.parse(p.html).dom.joined_text for p in scrapinghub_gold(SHARED / "scrapinghub")
        ]
    counts = [document.non_space_chars(t) for t in texts]
    with compiled_passes(False):
        assert counts == [document.non_space_chars(t) for t in texts]
    assert sum(counts) > 0


def _lineage_inputs(page: bytes):
    """What ``block_features`` hands to ``lineage_columns`` for ``page`` (None without blocks)."""
    from contentx_udf.methods import block_features as bf
    from contentx_udf.methods.blocks import content_document, page_blocks
    from contentx_udf.methods.cetd import densities, density_sum_selection
    from contentx_udf.methods.coreex import coreex_analysis
    from contentx_udf.page.document import Document
    from contentx_udf.settings import DEFAULTS

    view, _ = content_document(Document.parse(page))
    dom = view.dom
    blocks = page_blocks(dom)
    if not blocks.size:
        return None
    _, class_hash = bf._keyword_bits(view, dom, blocks.first_node)
    _, density = densities(dom, DEFAULTS["cetd-ds"], composite=False)
    _, composite, sums, selection = density_sum_selection(dom, DEFAULTS["cectd-ds"], composite=True)
    core_counts, score, _, set_text, _ = coreex_analysis(dom, DEFAULTS["coreex"])
    repeats = bf._repeated_siblings(dom, class_hash)
    return dom, blocks, class_hash, density, composite, sums, selection, core_counts, score, set_text, repeats


def test_lineage_and_lineage_columns_equal_the_numpy_steps():
    """``lineage`` (owner and three ancestors) and ``lineage_columns`` (CETD's, CoreEx's and the
    repeated siblings' values of them, then numpy's ``log1p``; the template numbers) give what
    the numpy steps give, bit for bit, on the tricky page and the scrapinghub pages, and with
    NaN, infinite and negative densities, sums and scores."""
    from contentx_udf.methods import block_features as bf

    from .compiled_check import same_partition

    fast = fast_module()
    rng = np.random.default_rng(5)
    checked = 0
    for page in real_pages(200):
        found = _lineage_inputs(page)
        if found is None:
            continue
        dom, blocks, class_hash, density, composite, sums, selection, core_counts, score = found[:9]
        set_text = found[9]
        repeats = found[10]
        parent, owner = dom.parent0, blocks.owner
        rows = [owner]
        for _ in range(3):
            rows.append(parent.take(rows[-1]))
        slow_lineage = np.stack(rows)
        lineage = fast.lineage(parent, owner)
        assert lineage.dtype == slow_lineage.dtype and np.array_equal(lineage, slow_lineage)
        variants = [(density, composite, sums, score)]
        if checked < 20:  # the same page with edge values in every array
            edges = np.array([np.nan, np.inf, -np.inf, -1.5, -0.0, 0.0, 1e-12])
            variants.append(
                tuple(
                    np.where(rng.random(dom.size) < 0.3, rng.choice(edges, dom.size), values)
                    for values in (density, composite, sums, score)
                )
            )
        for d, c, s, sc in variants:
            slow = np.zeros((len(bf.FEATURE_NAMES), blocks.size))
            got = np.zeros_like(slow)
            with np.errstate(invalid="ignore", divide="ignore"):  # (log1p of the edge values)
                bf._numpy_lineage_columns(
                    slow, slow_lineage, blocks.first_node, d, c, s, selection, dom, sc, core_counts, set_text,
                    repeats,
                )  # fmt: skip
                templates = fast.lineage_columns(
                    got, bf._LINEAGE_COLUMNS, lineage, blocks.first_node, d, c, s, selection.target,
                    dom.end[selection.target], sc, core_counts.link_cnt, core_counts.text_cnt, set_text,
                    repeats, dom.tag_id, class_hash, bf._PATH_MULTIPLIER_U64, bf.TEMPLATE_LEVELS,
                )  # fmt: skip
                np.log1p(got[bf._TD : bf._TD + 7], out=got[bf._TD : bf._TD + 7])
                np.log1p(got[bf._REPEAT : bf._REPEAT + 4], out=got[bf._REPEAT : bf._REPEAT + 4])
            assert np.array_equal(got, slow, equal_nan=True)
            assert same_partition(templates, bf._templates(dom, slow_lineage, class_hash))
        checked += 1
    assert checked >= min(len(real_pages(200)), 100) - 1


def test_composite_density_and_density_sums_of_the_compiled_passes_equal_numpy():
    """CETD's composite text density (``composite_terms``, numpy's ``log``, ``composite_finish``)
    and DensitySum (``density_sums``) are the numpy code's floats, bit for bit, on the scrapinghub
    pages' counts and on random counts with zeros, link text over all of the text and empty
    pages; DensitySum also with an element mask other than the DOM's."""
    from contentx_udf.methods import cetd
    from contentx_udf.page.document import Document

    fast_module()
    rng = np.random.default_rng(11)
    for page in real_pages(200):
        dom = Document.parse(page).dom
        counts = cetd._node_counts(dom, True)
        arrays = [(counts.chars, counts.tags, counts.link_chars, counts.link_tags, counts.body_link_ratio)]
        n = dom.size
        arrays.append(
            (
                rng.integers(0, 50, n).astype(np.float64),
                rng.integers(0, 5, n).astype(np.float64),
                rng.integers(0, 60, n).astype(np.float64),
                rng.integers(0, 3, n),  # (an int array: converted as numpy converts it)
                float(rng.random()),
            )
        )
        for chars, tags, link_chars, link_tags, ratio in arrays:
            fast = cetd.composite_text_density(chars, tags, link_chars, link_tags, ratio)
            with compiled_passes(False):
                slow = cetd.composite_text_density(chars, tags, link_chars, link_tags, ratio)
            assert fast.dtype == slow.dtype and np.array_equal(fast, slow)
            for is_element in (counts.is_element, rng.random(n) < 0.5):
                got = cetd.density_sum(dom, fast, is_element)
                with compiled_passes(False):
                    want = cetd.density_sum(dom, fast, is_element)
                assert got.dtype == want.dtype and np.array_equal(got, want)


def test_template_smoothing_of_the_compiled_pass_equals_numpy():
    """``template_smooth`` (``combined.smooth_by_template``) gives numpy's bincount steps'
    floats bit for bit: random templates, sizes, weights and mixes, singletons, one template."""
    from contentx_udf.methods.combined import smooth_by_template

    fast_module()
    rng = np.random.default_rng(3)
    cases = [(np.array([0.25]), np.array([0]), np.array([3.0]), 0.5, 1)]
    for n in (2, 3, 7, 50, 400):
        for groups in (1, 3, n):
            cases.append(
                (
                    rng.random(n),
                    rng.integers(0, groups, n),
                    rng.integers(0, 200, n) + 1.0,
                    float(rng.choice([0.3, 0.5, 1.0])),
                    int(rng.integers(1, 5)),
                )
            )
    for probability, templates, weights, mix, min_size in cases:
        fast = smooth_by_template(probability, templates, weights, mix, min_size)
        with compiled_passes(False), np.errstate(invalid="ignore"):  # (0/0 of the absent templates)
            slow = smooth_by_template(probability, templates, weights, mix, min_size)
        assert fast.dtype == slow.dtype and np.array_equal(fast, slow)


def test_node_views_of_the_compiled_pass_equal_the_numpy_properties():
    """``node_views`` (set by the compiled walk) gives the cached properties ``DomArrays``
    computes with numpy: text mask and indices, small tag ids, ``parent0``, block mask and block
    counter, same values and dtypes, on the tricky page, custom elements and the scrapinghub pages."""
    from contentx_udf.page.document import _NODE_VIEWS, Document, DomArrays

    fast_module()
    pages = [TRICKY.encode(), b"<p>a</p>", b"<x-a><x-b>t</x-b><p>u<br>v</p></x-a>", b"<div></div>"]
    pages += real_pages(200)[1:]
    for page in pages:
        dom = Document.parse(page).dom
        assert all(name in dom.__dict__ for name in _NODE_VIEWS)
        plain = DomArrays(dom.tag_id, dom.parent, dom.end, dom.text_list, dom.joined_text)
        for name in _NODE_VIEWS:
            want = getattr(plain, name)
            got = dom.__dict__[name]
            assert got.dtype == want.dtype and np.array_equal(got, want), name


def test_keyword_walk_of_the_wanted_elements_equals_the_masked_full_walk():
    """``ancestors_marked`` flags what ``subtree_sum`` of the marks finds (the nodes with a block's
    first node in their subtree), and ``attribute_keys`` reading only those elements gives the full
    walk's bits and class hashes where they are flagged and 0 elsewhere."""
    from contentx_udf.methods import block_features as bf
    from contentx_udf.methods.blocks import page_blocks
    from contentx_udf.page.document import Document

    fast = fast_module()
    bf._compiled_keywords()
    rng = np.random.default_rng(8)
    for page in real_pages(200):
        doc = Document.parse(page)
        dom = doc.dom
        if dom.size == 0 or doc.tree.body is None:
            continue
        for nodes in (page_blocks(dom).first_node, rng.integers(0, dom.size, 5), np.zeros(0, dtype=np.int64)):
            marks = np.zeros(dom.size, dtype=bool)
            marks[nodes] = True
            wanted = fast.ancestors_marked(dom.parent, nodes.astype(np.int64))
            assert np.array_equal(wanted.view(bool), dom.subtree_sum(marks) > 0)
            root = doc.tree.body.mem_id
            bits, hashes = fast.attribute_keys(root, dom.size, bf._raw_value_bits, 1000)
            some_bits, some_hashes = fast.attribute_keys(root, dom.size, bf._raw_value_bits, 1000, wanted)
            flagged = wanted.view(bool)
            assert np.array_equal(some_bits, np.where(flagged, bits, 0).astype(np.uint64))
            assert np.array_equal(some_hashes, np.where(flagged, hashes, 0))


def test_text_repeats_of_the_compiled_pass_equal_the_counter():
    """``text_repeats`` writes ``Counter(texts)[text]`` for every text, on repeated, empty and
    non-ASCII texts and on the lower-cased blocks of the scrapinghub pages."""
    from collections import Counter

    from contentx_udf.methods.blocks import page_blocks
    from contentx_udf.page.document import Document

    fast = fast_module()
    cases = [[], ["a"], ["a", "b", "a", "", "", "é", "é", "a"], ["x" * 1000] * 3 + ["😀"]]
    cases += [[t.lower() for t in page_blocks(Document.parse(p).dom).texts] for p in real_pages(200)]
    for texts in cases:
        out = np.full(len(texts), -1.0)
        fast.text_repeats(texts, out)
        counts = Counter(texts)
        assert out.tolist() == [float(counts[t]) for t in texts]


ODD_TITLES = (
    "",
    "<p>no title",
    "<title></title>",
    "<body><svg><title>A <b>x</b> b</title></svg><title>t</title>",
    "<title>a &amp;  b\n</title>",
    "<!-- <title>no</title> --><p><title>in body</title>",
    "<template><title>t</title></template><title>u</title>",
    "<html><head><TITLE> x\n y </TITLE>",
    "<title>é 😀 x</title>",
)


def test_the_title_and_text_nodes_of_the_compiled_walks_equal_selectolax():
    """``first_text_of`` gives the text of the first node ``tags("title")`` finds, and
    ``walk_texts`` the text nodes ``text(separator="\\x00")`` joins, on odd and real pages."""
    from contentx_udf.page.document import _TITLE_TAG_ID, _text_nodes

    fast = fast_module()
    pages = [p.encode() for p in ODD_TITLES] + real_pages(200)
    for page in pages:
        tree = LexborHTMLParser(page)
        titles = tree.tags("title")
        expected = titles[0].text() if titles else None
        assert fast.first_text_of(tree.root.mem_id, _TITLE_TAG_ID) == expected
        root = tree.body
        walked = fast.walk_texts(root.mem_id, 200_000)
        assert [a.tolist() for a in walked[:5]] == [a.tolist() for a in fast.walk(root.mem_id, 200_000)[:5]]
        old = _text_nodes(root, int((walked[0] == 2).sum()), False)
        assert walked[6] == (old[0] if old is not None else None)
    tree = LexborHTMLParser(TRICKY)
    assert fast.walk_texts(tree.body.mem_id, 5)[5:] == (True, None)  # (truncated: read by selectolax)


def test_lower_texts_of_the_compiled_pass_equal_str_lower():
    """``lower_texts`` gives ``str.lower`` of every text (the same string, of the same kind): every
    code point alone and beside ASCII, Latin-1 and wider ones, and random mixes with the context
    rules' capital sigma and dotted capital I."""
    import sys

    fast = fast_module()

    def same(got: list[str], texts: list[str]) -> bool:
        for g, t in zip(got, texts, strict=True):
            want = t.lower()
            if g != want:
                return False
            # the kind (sys.getsizeof) compared for texts of two characters or more: CPython shares
            # one-character strings (cached, some holding their UTF-8 form, which getsizeof counts)
            if len(g) > 1 and sys.getsizeof(g) != sys.getsizeof(want):
                return False
        return True

    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for group in (points, ["a" + c for c in points], [c + "é" for c in points], ["’" + c for c in points]):
        assert same(fast.lower_texts(group), group)
    rng = random.Random(5)
    alphabet = "aZ@[`{ 09\x7fAbCdEfXyZİΣσςÉ😀ßÅKΩ’Àÿ\u0100"
    for _ in range(5000):
        sizes = [rng.randrange(30) for _ in range(rng.randrange(5))]
        texts = ["".join(rng.choice(alphabet) for _ in range(size)) for size in sizes]
        assert same(fast.lower_texts(texts), texts)
    assert same(fast.lower_texts(["", "\ud800X", "ΟΔΟΣ ΟΔΟΣ."]), ["", "\ud800X", "ΟΔΟΣ ΟΔΟΣ."])


def test_best_set_share_of_the_compiled_pass_equals_numpy():
    """``best_set_share`` writes what ``np.isfinite``, ``argmax`` (NaN first), ``within`` and
    ``take`` give, on random trees with infinite and NaN scores."""
    fast = fast_module()
    rng = np.random.default_rng(4)
    for _ in range(2000):
        n = int(rng.integers(1, 40))
        parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)], dtype=np.int64)
        values = [0.5, 1.0, 2.0, -np.inf, np.inf, np.nan, 3.0]
        score = rng.choice(values, size=n, p=[0.2, 0.2, 0.2, 0.2, 0.05, 0.05, 0.1]).astype(np.float64)
        in_set = rng.random(n) < 0.5
        first = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
        expected = np.zeros(first.size)
        if np.isfinite(score).any():
            members = (in_set & (parent == int(score.argmax()))).nonzero()[0]
            inside = np.zeros(n, dtype=bool)
            for i in range(n):
                inside[i] = i in members or (parent[i] >= 0 and inside[parent[i]])
            expected[:] = inside.take(first)
        out = np.zeros(first.size)
        found = fast.best_set_share(score, in_set.view(np.uint8), parent, first, out)
        assert found == np.isfinite(score).any()
        assert out.tolist() == expected.tolist()
