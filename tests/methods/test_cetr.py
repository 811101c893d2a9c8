"""CETR (Weninger et al. WWW'10; Weninger & Hsu, histogram clustering): CETR-TM, CETR-KM,
CETR (tailored clustering) and CETR-DFF.

Formulas are checked against the overview's TTR table and small histograms computed by hand
from Eq. 1-4; the methods against hand-built pages whose content/boilerplate split is known.
"""

from __future__ import annotations

import html as html_module
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contentx_udf import extract
from contentx_udf.methods import cetr
from contentx_udf.methods.cetr import (
    density_farthest_first,
    gaussian_kernel,
    kmeans,
    moving_average_derivative,
    smooth_gaussian,
    source_lines,
    text_to_tag_ratio,
    two_dimensional_model,
)
from contentx_udf.page.document import Document
from contentx_udf.page.source import SPACE_CODE_POINTS, SourceArrays, clean_string, clean_text
from contentx_udf.page.tags import BLOCK_TAGS
from contentx_udf.settings import resolve_params

from ..helpers import assert_not_failed

METHODS = ("cetr-tm", "cetr-km", "cetr", "cetr-dff")
#: The papers' own settings: every line over 60 characters re-broken every 60 (overview FAQ),
#: sigma 3 ("radius of 3").
PAPER = {"rebreak_chars": 60, "rebreak_over": 60, "sigma": 3.0}
NO_REBREAK = {"rebreak_chars": 0}


def lines_of(html: str, **overrides) -> tuple[Document, cetr.Lines]:
    doc = Document.parse(html)
    return doc, source_lines(doc.source, resolve_params("cetr-tm", overrides))


def line_texts(doc: Document, lines: cetr.Lines) -> list[str]:
    html = doc.source.html
    return [html[s:e].strip() for s, e in zip(lines.start.tolist(), lines.end.tolist(), strict=True)]


# --- text-to-tag ratios (overview, "Tag Ratios" table) -----------------------------------------

TTR_TABLE_PAGE = """<html><body>
<div id="topnav">
<div id="storyPageContent2">
<div id="author">James Smith</div>
OKLAHOMA CITY - Police were told that

<p>The Oklahoman reported Sunday. Jones had</p>
</div></div>
</body></html>"""


def test_ttr_table_of_the_overview():
    doc, lines = lines_of(TTR_TABLE_PAGE, **NO_REBREAK)
    rows = dict(
        zip(
            line_texts(doc, lines),
            zip(lines.text_chars.tolist(), lines.tags.tolist(), strict=True),
            strict=True,
        )
    )
    ttr = dict(
        zip(line_texts(doc, lines), text_to_tag_ratio(lines.text_chars, lines.tags).tolist(), strict=True)
    )
    # HTML code -> (text, tags), TTR as in the table
    assert rows['<div id="topnav">'] == (0, 1) and ttr['<div id="topnav">'] == 0
    assert rows['<div id="storyPageContent2">'] == (0, 1) and ttr['<div id="storyPageContent2">'] == 0
    assert rows['<div id="author">James Smith</div>'] == (11, 2)
    assert ttr['<div id="author">James Smith</div>'] == 5.5
    # a line without tags: TTR = its text length
    assert rows["OKLAHOMA CITY - Police were told that"] == (37, 0)
    assert ttr["OKLAHOMA CITY - Police were told that"] == 37
    assert rows["</div></div>"] == (0, 2) and ttr["</div></div>"] == 0
    # the table's excerpt of this line shows 40 characters (it lists 41); 2 tags either way
    assert rows["<p>The Oklahoman reported Sunday. Jones had</p>"] == (40, 2)
    assert text_to_tag_ratio(np.array([41]), np.array([2]))[0] == 20.5


def test_blank_lines_are_dropped():
    doc, lines = lines_of(TTR_TABLE_PAGE, **NO_REBREAK)
    texts = line_texts(doc, lines)
    assert "" not in texts
    assert texts == ["<body>", *texts[1:7], "</body>"]  # six table rows between the body tags


def test_leading_and_trailing_whitespace_is_not_text():
    doc, lines = lines_of("<body>\n      <p>  two words  </p>   \n</body>", **NO_REBREAK)
    counts = dict(zip(line_texts(doc, lines), lines.text_chars.tolist(), strict=True))
    assert counts["<p>  two words  </p>"] == len("two words")


@pytest.mark.parametrize(("once", "expected"), [(True, len("AT&T < 5")), (False, len("AT&amp;T &lt; 5"))])
def test_entity_escapes_count_once(once, expected):
    doc, lines = lines_of("<body>\n<p>AT&amp;T &lt; 5</p>\n</body>", count_entities_once=once, **NO_REBREAK)
    counts = dict(zip(line_texts(doc, lines), lines.text_chars.tolist(), strict=True))
    assert counts["<p>AT&amp;T &lt; 5</p>"] == expected


# --- re-breaking long lines (overview FAQ) ------------------------------------------------------


def one_line_page(words: int = 400) -> str:
    body = "".join(
        f'<span class="w{i}">word{i}</span> extra{i} ' if i % 7 == 0 else f"token{i} " for i in range(words)
    )
    return f"<html><body><div>{body}</div></body></html>"


@pytest.mark.parametrize(("every", "over"), [(60, 60), (150, 200)])
def test_rebreaking_cuts_no_tag_and_no_word(every, over):
    doc, lines = lines_of(one_line_page(), rebreak_chars=every, rebreak_over=over)
    src = doc.source
    assert "\n" not in src.html.strip()
    assert lines.size >= src.size // every // 2  # the page was cut into many lines
    starts = lines.start[lines.start > 0]
    tag_starts = set(src.tag_start.tolist())
    for s in starts.tolist():
        inside_tag = bool(src.is_tag[s]) and s not in tag_starts
        assert not inside_tag, src.html[s - 20 : s + 20]
        # never between two characters of one word
        assert not (src.html[s - 1].isalnum() and src.html[s].isalnum()), src.html[s - 20 : s + 20]
    # every character of the page is on exactly one line (blank lines aside)
    assert np.all(lines.start[1:] >= lines.end[:-1])


def test_rebreaking_only_lines_over_the_limit():
    short = "<p>" + "short line " * 10 + "</p>"  # 117 characters
    long = "<p>" + "long line words " * 30 + "</p>"  # 487 characters
    html = f"<html><body>\n{short}\n{long}\n</body></html>"
    doc, kept = lines_of(html, rebreak_chars=60, rebreak_over=200)
    texts = line_texts(doc, kept)
    assert short in texts  # under the limit: left whole
    pieces = texts[texts.index(short) + 1 : texts.index("</body>")]
    assert len(long) // 60 - 1 <= len(pieces) <= math.ceil(len(long) / 60)
    assert " ".join(pieces) == long
    _, every_line = lines_of(html, rebreak_chars=60, rebreak_over=60)  # the FAQ's reading
    assert every_line.size == kept.size + 1  # now the short paragraph is cut too


# --- Gaussian smoothing (histogram paper, Eq. 1-3) ----------------------------------------------


def test_gaussian_kernel_eq1_eq2():
    k = gaussian_kernel(3.0)
    assert k.size == 2 * 3 + 1  # width 2*ceil(sigma) + 1
    assert math.isclose(k.sum(), 1.0)
    j = np.arange(-3, 4)
    expected = np.exp(-(j**2) / 18.0)
    np.testing.assert_allclose(k, expected / expected.sum())
    assert gaussian_kernel(2.5).size == 2 * 3 + 1  # ceil(2.5) = 3


def test_smoothing_eq3_by_hand():
    h = np.zeros(11)
    h[5] = 10.0
    k = gaussian_kernel(1.0)  # width 3: e^-0.5, 1, e^-0.5 normalised
    smoothed = smooth_gaussian(h, 1.0)
    # interior: h'_i = sum_j k'_{j+1} h_{i-j}
    assert math.isclose(smoothed[5], 10 * k[1])
    assert math.isclose(smoothed[4], 10 * k[0]) and math.isclose(smoothed[6], 10 * k[2])
    assert smoothed[3] == 0 and smoothed[7] == 0
    # a constant histogram stays constant, up to the ends (the kernel is renormalised there)
    np.testing.assert_allclose(smooth_gaussian(np.full(9, 4.0), 3.0), 4.0)
    # at the first line only the kernel's right half sees lines: 10 * k0 / (k0 + k1)
    edge = smooth_gaussian(np.array([0.0, 10.0, 0.0, 0.0]), 1.0)
    assert math.isclose(edge[0], 10 * k[0] / (k[1] + k[2]))


def test_smoothing_is_the_same_by_fft(monkeypatch):
    h = np.random.default_rng(3).random(500) * 50
    direct = smooth_gaussian(h, 40.0)
    monkeypatch.setattr(cetr, "_DIRECT_CONVOLUTION_WORK", 0)
    np.testing.assert_allclose(smooth_gaussian(h, 40.0), direct, atol=1e-9)


def test_smoothing_shorter_than_kernel():
    h = np.array([3.0, 9.0])
    s = smooth_gaussian(h, 5.0)  # kernel of 11 on 2 lines: weighted means of both lines
    k = np.exp(-np.array([0.0, 1.0]) / 50.0)
    assert math.isclose(s[0], (3 * k[0] + 9 * k[1]) / k.sum())
    assert math.isclose(s[1], (9 * k[0] + 3 * k[1]) / k.sum())


# --- threshold partitioning (histogram paper, "Threshold partitioning") -------------------


def test_threshold_is_lambda_times_std_of_the_smoothed_ttr():
    # no smoothing (sigma 0): h' = h.  TTRs 0 (tag lines), 60 and 12 (text / 2 tags)
    high = [f"<p>{f'high{i} ' * 20}</p>".replace(" </p>", "</p>") for i in range(4)]
    low = [f"<p>low{i} {'x' * (23 - len(f'low{i} '))}</p>" for i in range(4)]
    page = "<html><body>\n" + "<div></div>\n" * 8 + "\n".join(high + low) + "\n</body></html>"
    doc, lines = lines_of(page, **NO_REBREAK)
    ttr = sorted(text_to_tag_ratio(lines.text_chars, lines.tags).tolist())
    assert ttr == [0.0] * 10 + [11.5] * 4 + [59.5] * 4  # <body>, </body> and 8 tag lines at 0
    sigma = float(np.std(ttr))  # 23.8: between the two text levels
    params = resolve_params("cetr-tm", {"sigma": 0.0, **NO_REBREAK})
    result = cetr.cetr_tm(doc, params)
    assert result.scores["threshold"] == pytest.approx(sigma)
    assert all(f"high{i}" in result.text for i in range(4))
    assert not any(f"low{i}" in result.text for i in range(4))
    lenient = cetr.cetr_tm(doc, {**params, "lambda_": 0.4})  # 0.4 * 23.8 < 11.5
    assert all(f"low{i}" in lenient.text for i in range(4))


# --- the 2-D model (histogram paper, Eq. 4) ------------------------------------------------------


def test_moving_average_derivative_eq4_by_hand():
    h = np.array([0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 3.0])
    g = moving_average_derivative(h, 3)
    # g_i = mean(h_{i+1..i+3}) - h_i
    assert g[0] == pytest.approx(1.0)  # (0 + 0 + 3) / 3 - 0
    assert g[1] == pytest.approx(2.0)
    assert g[2] == pytest.approx(3.0)
    assert g[3] == pytest.approx(0.0)
    assert g[5] == pytest.approx(0.0)  # only one next value: 3 - 3
    assert g[6] == 0.0  # the last line has no next values
    np.testing.assert_allclose(moving_average_derivative(np.full(10, 7.0), 3), 0.0)


def test_two_dimensional_model_peaks_at_section_borders():
    ttr = np.concatenate((np.zeros(30), np.full(20, 50.0), np.zeros(30)))
    points = two_dimensional_model(ttr, 2.0, 3)
    smoothed, derivative = points[:, 0], points[:, 1]
    assert np.all(derivative >= 0)
    rise, fall = int(np.argmax(derivative[:40])), 40 + int(np.argmax(derivative[40:]))
    assert 24 <= rise <= 31 and 45 <= fall <= 52
    assert derivative[5] < 1e-6 and derivative[40] < derivative[rise] / 4
    assert smoothed[40] == pytest.approx(50.0)


# --- clustering -------------------------------------------------------------------------------

GROUPS = np.array(
    [[0.01 * i, 0.02 * (i % 3)] for i in range(30)]  # non-content, near the origin
    + [[0.9 + 0.01 * i, 0.1] for i in range(10)]  # content
    + [[0.5, 0.8 + 0.01 * i] for i in range(5)]  # section borders
)


@pytest.mark.parametrize("origin_fixed", [False, True])
def test_kmeans_separates_the_cluster_at_the_origin(origin_fixed):
    result = kmeans(GROUPS, 3, 100, origin_fixed=origin_fixed)
    content = result.labels != result.noncontent
    assert not content[:30].any() and content[30:].all()
    assert result.iterations <= 100
    if origin_fixed:
        assert result.noncontent == 0
        np.testing.assert_array_equal(result.centroids[0], [0.0, 0.0])


def test_tailored_clustering_keeps_the_origin_centroid():
    # a free k-means centroid would sit at the mean (0.5, 0); held at the origin the cluster
    # keeps only the points nearer the origin than the content centroid
    points = np.array([[0.4, 0.0], [0.5, 0.0], [0.6, 0.0], [5.0, 0.0], [5.0, 0.1]])
    free = kmeans(points, 2, 100)
    fixed = kmeans(points, 2, 100, origin_fixed=True)
    assert (free.labels != free.noncontent).sum() == 2
    np.testing.assert_array_equal(fixed.centroids[0], [0.0, 0.0])
    assert fixed.labels[:3].tolist() == [0, 0, 0]


def test_density_farthest_first_separates_the_cluster_at_the_origin():
    result = density_farthest_first(GROUPS, 3, 1e-6)
    content = result.labels != result.noncontent
    assert not content[:30].any() and content[30:].all()
    assert np.linalg.norm(result.centroids[result.noncontent]) < 0.2


def test_kmeans_on_fewer_points_than_clusters():
    one = kmeans(np.array([[1.0, 0.0]]), 3, 100)
    assert one.labels.tolist() == [0]
    same = kmeans(np.zeros((4, 2)), 3, 100, origin_fixed=True)
    assert (same.labels == 0).all()


# --- hand-built pages ------------------------------------------------------------------------

ARTICLE = [
    f"Paragraph {i} of the story: the council met on Tuesday to discuss the new budget for the "
    f"river district, and member number {i} argued at length that the plan would cost more than "
    f"the city could afford over the next decade, citing figures from the audit office."
    for i in range(14)
]


def news_page(one_line: bool = False) -> str:
    nav = "\n".join(
        f'<li class="menu-item item-{i}"><a href="/section/{i}">Section {i}</a></li>' for i in range(40)
    )
    footer = "\n".join(
        f'<li><a href="/legal/{i}">Legal {i}</a> | <a href="/c/{i}">Contact {i}</a></li>' for i in range(40)
    )
    article = "\n".join(f"<p>{p}</p>" for p in ARTICLE)
    html = f"""<html><head><title>t</title><script>var x = "Section 99";</script></head><body>
<div id="header"><ul class="menu">
{nav}
</ul></div>
<div id="main"><h1>Council debates budget</h1>
{article}
</div>
<div id="footer"><ul>
{footer}
</ul></div>
</body></html>"""
    return html.replace("\n", " ") if one_line else html


@pytest.mark.parametrize("one_line", [False, True])
@pytest.mark.parametrize("overrides", [{}, PAPER], ids=["defaults", "paper"])
@pytest.mark.parametrize("method", METHODS)
def test_article_in_boilerplate_out(method, overrides, one_line):
    result = extract(news_page(one_line), method, **overrides)
    assert result.status == "ok", result.error
    for p in ARTICLE:
        assert p in result.text
    # the boilerplate far from the article stays out (a few lines at the border may leak)
    for i in range(25):
        assert f"Section {i}\n" not in result.text + "\n" and f"Section {i} " not in result.text
    for i in range(15, 40):
        assert f"Legal {i}" not in result.text
    assert "Section 99" not in result.text  # scripts are gone before the ratios
    assert result.scores["content_lines"] > 0


@pytest.mark.parametrize("method", METHODS)
def test_scores_carry_the_methods_figures(method):
    scores = extract(news_page(), method).scores
    assert scores["lines"] > 80 and scores["sigma"] == 5.0
    if method == "cetr-tm":
        assert scores["threshold"] > 0
    else:
        assert {"centroid_0_ttr", "centroid_1_derivative", "iterations", "noncontent_ttr"} <= set(scores)


def test_sigma_from_histogram_is_the_std_of_the_ttr():
    doc = Document.parse(news_page())
    params = resolve_params("cetr-tm", {"sigma_from_histogram": True})
    lines = source_lines(doc.source, params)
    ttr = text_to_tag_ratio(lines.text_chars, lines.tags)
    assert cetr.cetr_tm(doc, params).scores["sigma"] == pytest.approx(ttr.std())


# --- degenerate pages -----------------------------------------------------------------------

DEGENERATE = {
    "empty": "",
    "empty bytes": b"",
    "no body": "<html><head><title>x</title></head></html>",
    "empty body": "<html><body></body></html>",
    "whitespace body": "<html><body>\n\n   \n\t</body></html>",
    "text only": "only some text without any markup at all",
    "one line": "<p>one short line</p>",
    "tags only": "<html><body>" + "<div><span></span></div>\n" * 50 + "</body></html>",
    "deep nesting": "<html><body>" + "<div>" * 20_000 + "deep text" + "</div>" * 20_000 + "</body></html>",
    "binary": bytes(np.random.default_rng(7).integers(0, 256, 50_000, dtype=np.uint8)),
    "long word": "<html><body><p>" + "x" * 100_000 + "</p></body></html>",
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", list(DEGENERATE))
def test_degenerate_pages(method, name):
    assert_not_failed(extract(DEGENERATE[name], method))


@pytest.mark.parametrize("method", METHODS)
def test_text_only_and_one_line_pages_keep_their_text(method):
    assert extract("only some text without any markup at all", method).text == (
        "only some text without any markup at all"
    )
    assert extract("<p>one short line</p>", method).text == "one short line"


@pytest.mark.parametrize("method", METHODS)
def test_megabytes_on_one_line_are_bounded(method):
    html = news_page(one_line=True)
    html = html.replace("<body>", "<body>" + "<b>bold</b> filler words here " * 60_000)
    result = extract(html, method)
    assert result.status == "ok", result.error
    assert result.scores["lines"] > 1000


# --- the source view: tags, text, output ---------------------------------------------------

_TAG_RE = re.compile(r"(<(/?)([A-Za-z][^\s/>]*)[^>]*>)")


def _regex_reading(body: str):
    """Tags as the regex ``</?[A-Za-z][^>]*>`` finds them, scanning left to right."""
    html = re.sub(r"<!--.*?-->", "", body, flags=re.DOTALL)
    parts = _TAG_RE.split(html)
    starts, ends, names, closing, pos = [], [], [], [], 0
    for i in range(0, len(parts) - 1, 4):
        pos += len(parts[i])
        starts.append(pos)
        pos += len(parts[i + 1])
        ends.append(pos)
        closing.append(parts[i + 2] == "/")
        names.append(parts[i + 3].lower())
    return html, starts, ends, names, closing, "".join(parts[0::4])


def test_space_code_points_are_those_of_str_isspace():
    assert set(SPACE_CODE_POINTS) == {c for c in range(0x110000) if chr(c).isspace()}


#: Pieces of hostile markup: tags cut anywhere, names of every case and length, characters
#: that are whitespace only to the regex, one beyond the Basic Multilingual Plane.
_PIECES = (
    "< > / a B div p x 1 - \u00e9 \u212a <!-- --> &amp; blockquote BLOCKQUOTE h1 H2 custom-element-name"
).split() + [" ", "\n", "\t", "\v", "\xa0", "\u3000", "\U0001f600", '"', "="]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_tags_are_those_of_the_regex_reading(pieces):
    body = "".join(pieces)
    html, starts, ends, names, closing, text = _regex_reading(body)
    src = SourceArrays.from_html(body)
    assert src.html == html
    assert src.tag_start.tolist() == starts and src.tag_end.tolist() == ends
    assert src.tag_closing.tolist() == closing
    assert src.tag_name == names
    assert src.tag_is_block.tolist() == [n in BLOCK_TAGS for n in names]
    for wanted in (("a",), ("div", "p"), ("A",), ("custom-element-name",)):
        assert src.tag_mask(wanted).tolist() == [n in wanted for n in names]
    assert src.text_codes.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass") == text
    assert src.is_tag.tolist() == [
        any(s <= i < e for s, e in zip(starts, ends, strict=True)) for i in range(len(html))
    ]


def _reference_clean(text: str) -> str:
    text = html_module.unescape(text) if "&" in text else text
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \n\t\r\x0b\x1c\x85\xa0\u2003\u3000ab&;ltgampnbsp<>é", max_size=60))
def test_clean_text_is_unescape_and_whitespace_collapse(text):
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    assert clean_text(codes) == _reference_clean(text) == clean_string(text)


@pytest.mark.parametrize("page", [TTR_TABLE_PAGE, "<body>\n<p>AT&amp;T &lt; 5</p>\n</body>"])
def test_text_of_spans_is_text_of_their_characters(page):
    html = Document.parse(one_line_page(60) + page).source.html
    lines = source_lines(
        SourceArrays.from_html(html), resolve_params("cetr-tm", {"rebreak_chars": 30, "rebreak_over": 30})
    )
    rng = np.random.default_rng(5)
    for _ in range(30):
        chosen = rng.random(lines.size) < rng.random()
        _check_spans(html, lines.start[chosen], lines.end[chosen])


@pytest.mark.parametrize("page", [TTR_TABLE_PAGE, "<body>\n<p>AT&amp;T &lt; 5</p>\n</body>"])
def test_content_text_is_text_of_spans(page):
    """content_text (the lines' places in the block text, computed once per page) gives what
    text_of_spans gives for the selected lines' spans."""
    html = Document.parse(one_line_page(60) + page).source.html
    params = resolve_params("cetr-tm", {"rebreak_chars": 30, "rebreak_over": 30})
    src = SourceArrays.from_html(html)
    lines = source_lines(src, params)
    rng = np.random.default_rng(7)
    for _ in range(40):
        chosen = rng.random(lines.size) < rng.random()
        expected = SourceArrays.from_html(html).text_of_spans(lines.start[chosen], lines.end[chosen])
        assert cetr.content_text(src, lines, chosen) == expected


def _check_spans(html: str, starts: np.ndarray, ends: np.ndarray) -> None:
    mask = np.zeros(len(html), dtype=bool)
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        mask[s:e] = True
    expected = SourceArrays.from_html(html).text_of(mask)
    assert SourceArrays.from_html(html).text_of_spans(starts, ends) == expected  # names the range only
    src = SourceArrays.from_html(html)
    src.tag_is_block  # noqa: B018 -- every tag named first
    assert src.text_of_spans(starts, ends) == expected


def _reference_lines(src: SourceArrays, every: int, over: int, once: bool):
    """The lines by brute force over the characters (starts, ends, text characters, tags)."""
    html, n = src.html, src.size
    is_tag = np.zeros(n, dtype=bool)
    for s, e in zip(src.tag_start.tolist(), src.tag_end.tolist(), strict=True):
        is_tag[s:e] = True
    candidate = [not is_tag[p] and ord(html[p]) <= 32 for p in range(n)]
    for j in range(1, src.tag_start.size):
        if src.tag_start[j] == src.tag_end[j - 1]:
            candidate[src.tag_start[j]] = True
    starts = [0] + [p + 1 for p in range(n) if html[p] == "\n" and not is_tag[p]]
    bounds = list(zip(starts, [*starts[1:], n], strict=True))
    for s, e in bounds:
        if every > 0 and e - s > max(over, every):
            last = None
            for m in range(1, (e - s - 1) // every + 1):
                c = next((p for p in range(s + every * m, e) if candidate[p]), None)
                if c is not None and c != last:
                    starts.append(c)
                    last = c
    starts = sorted(p for p in set(starts) if p < n)
    rows = []
    for s, e in zip(starts, [*starts[1:], n][: len(starts)], strict=True):
        solid = [p for p in range(s, e) if not is_tag[p] and ord(html[p]) > 32]
        chars = sum(1 for p in range(solid[0], solid[-1] + 1) if not is_tag[p]) if solid else 0
        if once:
            for p in solid:
                if html[p] == "&" and p + 1 < n:
                    chars -= {"a": 4, "l": 3, "g": 3, "n": 5}.get(html[p + 1], 0)
        tags = sum(1 for t in src.tag_start.tolist() if s <= t < e)
        if max(chars, 0) > 0 or tags > 0:
            rows.append((s, e, max(chars, 0), tags))
    return rows


_LINE_PIECES = [
    "<p>",
    "</p>",
    "<b>",
    "</b>",
    "<br>",
    "word",
    "x",
    " ",
    "  ",
    "\n",
    "&amp;",
    "&lt;",
    "&nbsp;",
    "é",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_LINE_PIECES), max_size=120),
    st.sampled_from([(0, 0), (5, 5), (7, 12), (30, 40)]),
    st.booleans(),
)
def test_lines_are_those_of_the_characters(pieces, rebreak, once):
    src = SourceArrays.from_html("".join(pieces))
    every, over = rebreak
    lines = source_lines(src, {"rebreak_chars": every, "rebreak_over": over, "count_entities_once": once})
    got = list(
        zip(
            lines.start.tolist(),
            lines.end.tolist(),
            lines.text_chars.tolist(),
            lines.tags.tolist(),
            strict=True,
        )
    )
    assert got == _reference_lines(src, every, over, once)
    chosen = np.arange(lines.size) % 3 != 1
    _check_spans(src.html, lines.start[chosen], lines.end[chosen])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1000), max_size=12), st.integers(0, 5))
def test_moving_average_derivative_is_the_mean_of_the_next_values(values, alpha):
    h = np.array(values, dtype=np.float64)
    expected = [
        (sum(h[i + 1 : i + 1 + alpha]) / len(h[i + 1 : i + 1 + alpha]) - h[i])
        if len(h[i + 1 : i + 1 + alpha])
        else 0.0
        for i in range(h.size)
    ]
    np.testing.assert_allclose(moving_average_derivative(h, alpha), expected, rtol=1e-9, atol=1e-9)
