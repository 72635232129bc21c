"""MinimizeText: letters, digits and a few symbols, lowercased, one block per <div>."""

from __future__ import annotations

import itertools
import re
import sys
import unicodedata

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.corpus.blocks import blocks_to_html
from transforms.document import Document
from transforms.stages.minimize_text import (CODE_PAGES, KEPT_SYMBOLS, _letters, codepage_is_exact,
                                             dropped_letter_share, minimize_block, minimize_blocks, minimize_document,
                                             minimize_lines, parse_scripts, script_rules)
from transforms.stages.minimize_text_transform import MinimizeText
from tests.helpers import document

# Written out from the documented rule, independently of the module's ranges.
KEPT = re.compile(r"^[a-z0-9\u00df-\u00f6\u00f8-\u024f\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f"
                  r"\u0400-\u0482\u048a-\u052f\u1c80-\u1c8f\ua640-\ua66e\ua680-\ua69d&\-'.,:%+@#$/ ]*$")
LATIN_AND_CYRILLIC_LETTERS = [
    chr(code) for low, high in ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x400, 0x482), (0x48A, 0x52F))
    for code in range(low, high + 1) if unicodedata.category(chr(code)).startswith("L")
]


@pytest.mark.parametrize("block,expected", [
    ("Hello, World!", "hello, world"),
    ("ПРИВЕТ Мир", "привет мир"),
    ("Price: $5 + 10% @home #tag a/b & c-d 'q' 1.5,6", "price: $5 + 10% @home #tag a/b & c-d 'q' 1.5,6"),
    ("Grüße aus Köln, Ærøskøbing", "grüße aus köln, ærøskøbing"),
    ("日本語 text ★ ok (yes) [no] {x} \"q\" ! ? ; *", "text ok yes no x q"),
    ("  many   spaces\t\nand\u00a0nbsp  ", "many spaces and nbsp"),
    ("при\u0301вет", "привет"),
    ("e\u0301te\u0301", "été"),
    ("co\u00adop", "coop"),
    ("zero\u200bwidth\u200c\u200djoin\u2060er\ufeff", "zerowidthjoiner"),
    ("ＡＢＣ ｄｅｆ １２３", "abc def 123"),
    ("ﬁne ﬂow", "fine flow"),
    ("\u2018single\u2019 \u2013 dash \u2212 minus", "'single' - dash - minus"),
    ("İstanbul", "istanbul"),
    ("!!! ??? ★★★", ""),
    ("", ""),
])
def test_minimize_block(block, expected):
    assert minimize_block(block) == expected


def test_empty_blocks_are_removed():
    assert minimize_blocks(["Hello", "★ ★", "", "  ", "World"]) == ["hello", "world"]


def test_kept_symbols_are_the_documented_ones():
    assert set(KEPT_SYMBOLS) == set("&-'.,:%+@#$/")
    assert minimize_block(KEPT_SYMBOLS) == KEPT_SYMBOLS


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_output_only_holds_kept_characters_and_single_spaces(block):
    result = minimize_block(block)
    assert KEPT.match(result), result
    assert "  " not in result
    assert result == result.strip()


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_minimize_is_idempotent(block):
    once = minimize_block(block)
    assert minimize_block(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(LATIN_AND_CYRILLIC_LETTERS), min_size=1, max_size=12))
def test_a_word_of_latin_or_cyrillic_letters_stays_one_word(word):
    result = minimize_block(word)
    assert result and " " not in result, (word, result)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=6))
def test_minimize_blocks_is_minimize_block_without_empties(block_list):
    assert minimize_blocks(block_list) == [m for m in map(minimize_block, block_list) if m]


def _document(html: str, url: str = "https://example.org/") -> Document:
    return document(url=url, warc_record_id="<urn:uuid:1>", warc_date="2026-01-15T10:00:00Z",
                    source_file="t.warc.gz", source_offset=0, http_status=200, content_type="text/html",
                    cleaned_html=html)


def test_minimize_document():
    doc = minimize_document(_document(blocks_to_html(["Hello, World!", "★★★", "Foo & <Bar>"])))
    assert doc.html == "<div>hello, world</div><div>foo &amp; bar</div>"
    assert doc.text == "hello, world\nfoo & bar"
    assert doc.minimized_bytes == len(doc.html.encode("utf-8"))


LINES_TEXT = st.text(alphabet=st.sampled_from(list("ab &;<>/ltgmp\n\x00\r\u00e9\u4e2d\u0301\u00b5")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(LINES_TEXT, st.sampled_from([None, "latin", "han"]))
def test_minimizing_lines_is_minimizing_their_div_blocks(text, scripts):
    # What a line rule leaves of a page, minimized from the text itself: the document that escaping its lines into
    # `<div>` blocks and reading them back gives (entities, NUL, empty lines, marks, scripts kept or not).
    doc = _document("")
    as_blocks = minimize_document(doc.replace(cleaned_html=blocks_to_html(text.split("\n") if text else [])),
                                  scripts=scripts, clean_text=True)
    assert minimize_lines(doc, text, scripts=scripts) == as_blocks


def test_minimize_text_transform():
    docs = [_document(blocks_to_html(["Новый МОСТ", "через Неву!"]), "https://a.example.org/"),
            _document("", "https://b.example.org/"),
            _document(12345, "https://broken.example.org/")]  # the stage fails on it
    with TestPipeline() as pipeline:
        result = pipeline | beam.Create(docs) | MinimizeText()
        assert_that(result.documents | "Docs" >> beam.Map(lambda d: (d.capture.url, d.html, d.text, d.minimized_bytes)),
                    equal_to([("https://a.example.org/", "<div>новый мост</div><div>через неву</div>",
                               "новый мост\nчерез неву", len("<div>новый мост</div><div>через неву</div>".encode())),
                              ("https://b.example.org/", "", "", 0)]), label="documents")
        assert_that(result.dead_letter | "Dead" >> beam.Map(lambda d: (d.stage, d.url)),
                    equal_to([("minimize_text", "https://broken.example.org/")]), label="dead")


def test_the_spans_passed_over_hold_no_combining_marks():
    # The scan at import skips SPANS_WITHOUT_MARKS; on this Python's Unicode data it must find what the full scan finds.
    from transforms.stages.minimize_text import _marks

    assert _marks() == _marks(spans_without_marks=())


CODE_PAGE_TEXT = st.text(alphabet=st.sampled_from(sorted(
    set("".join(page.characters for page in CODE_PAGES)) | set(" \n\t\u00a0\u0301\u4e2d\u00bd\u2026"))), max_size=40)


@settings(max_examples=500, deadline=None)
@given(st.lists(CODE_PAGE_TEXT, max_size=6))
def test_the_code_page_path_is_the_rules_as_written(block_list):
    # Text of the code pages' characters takes the fast path (with a few others, the marked one):
    # spaces at the ends of blocks, separators and replacements (`½`, `…`) must come out as the rules say.
    assert minimize_blocks(block_list) == [m for m in map(minimize_block, block_list) if m]


@pytest.mark.parametrize("page", CODE_PAGES, ids=lambda page: page.name)
def test_every_pair_of_a_code_pages_characters_minimizes_as_the_rules_say(page):
    assert codepage_is_exact(page)


def test_the_share_of_dropped_letters_counts_only_letters_as_kept():
    # `҂` (a Cyrillic sign, kept) is no letter: the three Greek letters are all the letters.
    assert minimize_block("Καλ ҂") == "҂"
    assert dropped_letter_share("Καλ ҂", "҂") == 1.0


# Characters the rules treat by their context or change the letters of: composing marks, Hangul's jamo, a final
# sigma, ligatures, `İ`, `µ`, digits, Han and Arabic beside Cyrillic.
CONTEXTUAL = "абвЖЁё\u0301\u0308\u0328e\u1100\u1161\u11a8가ΣσςΑﬁİµ²①日本ابت٣ _-."


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=CONTEXTUAL, max_size=30),
       scripts=st.sampled_from(["latin,cyrillic", "latin", "cyrillic,greek,hangul", "all"]))
def test_letters_dropped_are_the_letters_applying_the_rules_loses(text, scripts):
    rules = script_rules(parse_scripts(scripts))
    assert rules.letters_dropped(text) == max(0, _letters(text) - _letters(rules.apply_rules(text)))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=CONTEXTUAL + "aé€™ ,\n\x00]^\\-", max_size=30))
def test_the_share_of_dropped_letters_counts_the_rules_on_the_runs_outside_the_western_page(text):
    page = CODE_PAGES[0]
    rules = script_rules(None)
    outside = " ".join("".join(run) for inside, run in itertools.groupby(text, lambda c: c in page.characters)
                       if not inside)
    dropped = sum(map(text.count, rules.dropped_page_letters)) + max(
        0, _letters(outside) - _letters(rules.apply_rules(outside)))
    after = minimize_block(text)
    expected = round(dropped / (dropped + _letters(after)), 4) if dropped else 0.0
    assert dropped_letter_share(text, after) == expected


@pytest.mark.parametrize("scripts", ["latin,cyrillic", "cyrillic", "all"])
def test_the_characters_that_lose_no_letter_compose_with_nothing_before_them(scripts):
    # (A text of these and of the western page's characters is, outside the page, as the rules act on each alone:
    # none is the second character of a canonical composition, which NFKC would join to the one before it.)
    rules = script_rules(parse_scripts(scripts))
    seconds = {chr(int(parts[1], 16)) for parts in (unicodedata.decomposition(chr(code)).split()
                                                    for code in range(sys.maxunicode + 1))
               if len(parts) == 2 and not parts[0].startswith("<")}
    assert not [second for second in seconds if rules.losing_none.fullmatch(second)]
    assert rules.losing_none.fullmatch("Съешь же ещё этих мягких французских булок, Æsir")


def test_dropped_letters_follow_the_scripts_whatever_was_asked_before():
    # More choices than the rules kept in memory, asked in turn: each answer is its own choice's.
    # `µ` becomes Greek under NFKC; `a` is Latin.
    choices = [(latin, greek, other) for other in ("cyrillic", "hebrew", "arabic", "thai")
               for latin in (False, True) for greek in (False, True)]
    for _ in range(4):
        for latin, greek, other in choices:
            scripts = parse_scripts([other] + ["latin"] * latin + ["greek"] * greek)
            expected = (2 - latin - greek) / 2
            assert dropped_letter_share("µ a", minimize_block("µ a", scripts), scripts) == expected, scripts
