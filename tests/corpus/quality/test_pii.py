"""PII masking: e-mails and public IPv4/IPv6 addresses become fixed addresses; version numbers,
dates and private or reserved addresses stay; counts per text."""

from __future__ import annotations

import pytest

from contentx_udf.corpus.quality.pii import mask_pii


def masked(text: str) -> tuple[str, int, int]:
    texts, emails, ips = mask_pii([text])
    return texts.to_pylist()[0], int(emails[0]), int(ips[0])


def test_emails_are_masked_and_counted():
    text = "Write to jane.doe+news@mail.example.org or to bob@sub.example.co.uk."
    assert masked(text) == ("Write to email@example.com or to email@example.com.", 2, 0)


def test_public_addresses_are_masked():
    text = "Resolvers 8.8.8.8 and 1.1.1.1, or 2001:4860:4860::8888 and 2606:4700:4700::1111."
    assert masked(text) == ("Resolvers 0.0.0.0 and 0.0.0.0, or :: and ::.", 0, 4)


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "127.0.0.1",
        "169.254.0.9",
        "0.0.0.0",
        "::1",
        "fe80::1ff:fe23:4567:890a",
        "fd12:3456:789a::1",
        "2001:db8::1",
    ],
)
def test_private_and_reserved_addresses_stay(address):
    text = f"The host is at {address} on the local network."
    assert masked(text) == (text, 0, 0)


@pytest.mark.parametrize(
    "text",
    [
        "Upgrade to version 1.2.3.4 today.",
        "Released v8.8.8.8 last week.",
        "See section 1.2.3.4.5 of the manual.",
        "Build 8.8.8.8b is out.",
        "Meet on 12.10.2023 at 10:30:15.",
        "Use std::vector and a::b::c in C++.",
    ],
)
def test_version_numbers_dates_and_code_stay(text):
    assert masked(text) == (text, 0, 0)


def test_masking_twice_changes_nothing():
    once = masked("mail me at a@b.example.com from 8.8.4.4")
    assert once[1:] == (1, 1)
    assert masked(once[0]) == (once[0], 0, 0)


def test_counts_per_text_in_a_batch():
    texts, emails, ips = mask_pii(["x@example.net 9.9.9.9", "nothing here", "1.1.1.1 and 2.2.2.2"])
    assert texts.to_pylist() == ["email@example.com 0.0.0.0", "nothing here", "0.0.0.0 and 0.0.0.0"]
    assert emails.tolist() == [1, 0, 0]
    assert ips.tolist() == [1, 0, 2]
