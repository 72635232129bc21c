"""--pii: e-mail and public IP addresses replaced by fixed placeholders, before the content hash."""

from __future__ import annotations

import ipaddress
import json

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.options import parse_settings
from pipeline.sample import Capture
from tests.helpers import page
from tests.test_cli import corpus_records, run_main
from transforms.stages.filters import pii
from transforms.stages.filters.pii import EMAIL_PLACEHOLDER, IPV4_PLACEHOLDER, IPV6_PLACEHOLDER, scrub


def test_emails_and_public_addresses_are_replaced_and_counted():
    text, counts = scrub("Write to Jane.Doe+news@Mail.Example.co.uk or ping 8.8.8.8 and 2001:4860:4860::8888.")
    assert text == (f"Write to {EMAIL_PLACEHOLDER} or ping {IPV4_PLACEHOLDER} and {IPV6_PLACEHOLDER}.")
    assert counts == {"email": 1, "ipv4": 1, "ipv6": 1}


def test_private_reserved_versions_and_dates_are_left_alone():
    text = ("router 192.168.1.1, 10.0.0.7, 127.0.0.1, 169.254.0.9, docs 203.0.113.5 and 2001:db8::7, fe80::1, "
            "std::vector a::b, version 1.2.3.4, v2.4.1.0, build 8.8.8.8, on 2024.01.02 or 02.01.2024, at 10:30:45, "
            "in 1.2.3.4.5 and 999.1.1.1")
    assert scrub(text) == (text, {})


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(v=4))
def test_every_ipv4_address_is_replaced_exactly_when_it_is_public(address):
    text, counts = scrub(f"host {address} answered")
    assert (text == f"host {IPV4_PLACEHOLDER} answered") == address.is_global
    assert counts.get("ipv4", 0) == int(address.is_global)


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(v=6, network="2000::/3"))
def test_every_global_unicast_ipv6_address_is_replaced_exactly_when_it_is_public(address):
    text, _ = scrub(f"host {address.compressed} answered")
    assert (text == f"host {IPV6_PLACEHOLDER} answered") == address.is_global


class CountingSearch:
    """A compiled pattern that adds up the characters each `search` is given to read."""

    def __init__(self, pattern):
        self.pattern, self.read = pattern, 0

    def search(self, string, pos=0, endpos=None):
        self.read += (len(string) if endpos is None else endpos) - pos
        return self.pattern.search(string, pos, len(string) if endpos is None else endpos)


def test_the_version_word_check_reads_text_in_proportion_to_the_addresses(monkeypatch):
    # Searching the whole text before each address for a version word made a page of 16,000 addresses take
    # minutes: the characters read must grow as the addresses do, not as their square.
    def characters_read(addresses: int) -> int:
        counting = CountingSearch(pii._VERSION_BEFORE)
        monkeypatch.setattr(pii, "_VERSION_BEFORE", counting)
        text, counts = scrub(" ".join(f"8.8.{n // 250}.{n % 250 + 1}" for n in range(addresses)))
        monkeypatch.undo()
        assert counts == {"ipv4": addresses}
        return counting.read

    assert characters_read(4_000) <= 2.2 * characters_read(2_000)


def test_a_version_word_before_white_space_still_keeps_the_number():
    text = "release\n\t  8.8.8.8, Version  1.1.1.1 and xv 8.8.4.4"
    assert scrub(text) == (f"release\n\t  8.8.8.8, Version  1.1.1.1 and xv {IPV4_PLACEHOLDER}", {"ipv4": 1})


def test_placeholders_are_fixed_points():
    text = f"{EMAIL_PLACEHOLDER} {IPV4_PLACEHOLDER} {IPV6_PLACEHOLDER}"
    assert scrub(scrub(text)[0])[0] == text and not ipaddress.ip_address(IPV6_PLACEHOLDER).is_global


def test_without_pii_the_build_identity_is_as_it_was():
    assert "pii" not in parse_settings(["--output", "/tmp/never-written"]).build_identity()
    assert parse_settings(["--output", "/tmp/never-written", "--pii"]).build_identity()["pii"] is True


PERSONAL = Capture("https://en.example.org/contact", page(
    "<p>Write to jane.doe@example.net about the server at 8.8.4.4, not 192.168.0.1.</p>").encode("utf-8"))
SAME_BUT_OTHER_ADDRESS = Capture("https://en.example.org/contact2", page(
    "<p>Write to john.roe@example.net about the server at 1.1.1.1, not 192.168.0.1.</p>").encode("utf-8"))


@pytest.mark.slow
def test_pii_build_replaces_before_the_content_hash_and_counts(write_warc, tmp_path):
    source = write_warc([PERSONAL, SAME_BUT_OTHER_ADDRESS])
    output = tmp_path / "out"
    code, stdout, stderr = run_main(["--input", str(source), "--output", str(output), "--quiet", "--pii",
                                     "--fields", "url,html,text,clean_text,content_hash"])
    assert code == 0, stderr
    # Once the addresses are replaced the two pages are the same: one is a duplicate of the other.
    (record,) = corpus_records(output)
    for field in ("html", "text", "clean_text"):
        assert "example.net" not in record[field] and "8.8.4.4" not in record[field]
        assert IPV4_PLACEHOLDER in record[field] and "192.168.0.1" in record[field]
    report = json.loads((output / "report.json").read_text())
    assert report["records"]["duplicates"] == 1 and report["records"]["balanced"]
    assert report["filters"]["pii_replaced"] == {"email": 2, "ipv4": 2}
    assert "--pii: email replaced" in stdout
