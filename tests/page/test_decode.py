"""Browser-like decoding: BOM, HTTP charset, <meta>, UTF-8, detector; never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contentx_udf.page.decode import decode_html, normalize_charset

RUSSIAN = "Это тестовая страница в кодировке windows-1251, и в ней много русского текста. " * 5


def page(body: str, meta: str | None = None) -> str:
    head = f'<meta charset="{meta}">' if meta else ""
    return f"<html><head>{head}<title>t</title></head><body><p>{body}</p></body></html>"


@pytest.mark.parametrize(
    "label, expected",
    [
        ("ISO-8859-1", "cp1252"),
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("euc-kr", "cp949"),
        ("Shift_JIS", "cp932"),
        ("utf8", "utf-8"),
        ("windows-1251", "cp1251"),
        ("no-such-charset", None),
        ("", None),
    ],
)
def test_labels_map_to_what_browsers_use(label, expected):
    assert normalize_charset(label) == expected


def test_bom_wins_over_everything():
    data = b"\xef\xbb\xbf" + page("caf\u00e9", meta="windows-1251").encode("utf-8")
    d = decode_html(data, "text/html; charset=iso-8859-1")
    assert d.source == "bom" and "caf\u00e9" in d.text


def test_http_charset_before_meta():
    data = page(RUSSIAN, meta="iso-8859-1").encode("cp1251")
    d = decode_html(data, "text/html; charset=windows-1251")
    assert d.source == "http" and RUSSIAN in d.text


def test_charset_only_in_meta_windows_1251():
    data = page(RUSSIAN, meta="windows-1251").encode("cp1251")
    d = decode_html(data, "text/html")
    assert d.source == "meta" and RUSSIAN in d.text


def test_meta_http_equiv():
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=EUC-JP"></head>'
        "<body><p>日本語のテキストです。</p></body></html>"
    )
    d = decode_html(html.encode("euc_jp"))
    assert "日本語のテキストです。" in d.text and d.encoding == "euc_jp"


def test_gbk_characters_in_a_page_declared_gb2312():
    text = "中文镕堃"  # the last two characters are in GBK but not in GB2312
    d = decode_html(page(text, meta="gb2312").encode("gbk"))
    assert text in d.text and not d.replaced


def test_euc_kr_extension_characters():
    text = "똠방각하 한국어"  # 똠 exists only in the cp949 extension of EUC-KR
    d = decode_html(page(text, meta="euc-kr").encode("cp949"))
    assert text in d.text and not d.replaced


def test_utf8_declared_as_latin1_is_read_as_utf8():
    d = decode_html(page("Grüße aus Köln").encode("utf-8"), "text/html; charset=ISO-8859-1")
    assert "Grüße aus Köln" in d.text and d.encoding == "utf-8"


def test_wrong_meta_declaration_falls_back_to_detection():
    data = page(RUSSIAN, meta="utf-8").encode("cp1251")
    d = decode_html(data)
    assert "\ufffd" not in d.text
    assert "Это тестовая страница" in d.text


def test_no_declaration_valid_utf8():
    d = decode_html(page("naïve café").encode("utf-8"))
    assert d.source == "utf-8" and "naïve café" in d.text


def test_invalid_utf8_and_nul_bytes_never_raise():
    d = decode_html(b"<p>ok \xff\xfe\x00\x80 bytes</p>", "text/html; charset=utf-8")
    assert "ok" in d.text and "bytes" in d.text


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=4096),
    st.sampled_from(
        [
            None,
            "text/html",
            "text/html; charset=utf-8",
            "text/html; charset=bogus",
            "text/html; charset=utf-16",
        ]
    ),
)
def test_arbitrary_bytes_decode(data, content_type):
    d = decode_html(data, content_type)
    assert isinstance(d.text, str)
