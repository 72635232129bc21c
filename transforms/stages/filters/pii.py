"""Personal data in a page's text (`--pii`): e-mail addresses and public IP addresses, replaced by fixed
placeholders.

As datatrove's PIIFormatter (and dolma's) do, with a fixed placeholder rather than one that rotates, so that
every build writes the same bytes: `email@example.com` (datatrove's first; example.com is reserved for this)
and, for IPv4, `22.214.171.124` (datatrove's first placeholder address); for IPv6, which datatrove does not
replace, `2001:db8::1` (the documentation prefix, RFC 3849). Left alone: private, loopback, link-local,
documentation and other reserved addresses (`ipaddress`'s `is_global` is false), IPv6 outside global unicast
(2000::/3, so that `a::b` in code is no address), dotted numbers inside longer ones (`1.2.3.4.5`), numbers a
version word comes before (`version 1.2.3.4`, `v1.2.3.4`), and dates (no part of a date is an IPv4 octet
sequence of four).
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter

EMAIL_PLACEHOLDER = "email@example.com"
IPV4_PLACEHOLDER = "22.214.171.124"
IPV6_PLACEHOLDER = "2001:db8::1"
EMAIL, IPV4, IPV6 = "email", "ipv4", "ipv6"
KINDS = (EMAIL, IPV4, IPV6)

_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}\b")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])[23][0-9A-Fa-f]{0,3}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
_VERSION_BEFORE = re.compile(r"(?i)(?:\bversion|\bver\.?|\brelease|\bbuild|\brev\.?|\bv)\s*$")
_LONGEST_VERSION_WORD = len("version")


def _is_public(candidate: str) -> bool:
    try:
        return ipaddress.ip_address(candidate).is_global
    except ValueError:
        return False


def _after_version_word(text: str, start: int) -> bool:
    """Whether a version word (`_VERSION_BEFORE`), then perhaps white space, ends at `start`. Searched from the
    word's earliest start, not the text's: from the text's, every address cost a pass over all the text before
    it, quadratic in the addresses of a page (16,000 took minutes)."""
    word_end = start
    while word_end and text[word_end - 1].isspace():
        word_end -= 1
    return _VERSION_BEFORE.search(text, max(0, word_end - _LONGEST_VERSION_WORD), start) is not None


def scrub(text: str) -> tuple[str, Counter]:
    """`text` with its e-mail addresses and public IP addresses replaced, and how many of each kind."""
    counts: Counter = Counter()
    if "@" in text:
        text, emails = _EMAIL.subn(EMAIL_PLACEHOLDER, text)
        counts[EMAIL] += emails

    def ipv4(match: re.Match) -> str:
        found = match.group()
        if _after_version_word(match.string, match.start()) or not _is_public(found):
            return found
        counts[IPV4] += 1
        return IPV4_PLACEHOLDER

    def ipv6(match: re.Match) -> str:
        found = match.group()
        if not _is_public(found):
            return found
        counts[IPV6] += 1
        return IPV6_PLACEHOLDER

    if "." in text:
        text = _IPV4.sub(ipv4, text)
    if "::" in text or text.count(":") >= 7:
        text = _IPV6.sub(ipv6, text)
    return text, +counts
