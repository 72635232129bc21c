"""A generated crawl of sites of many pages, with the gold of each line: what repeats on a site (its menu,
footer, cookie notice, "related" and newsletter lines) is boilerplate, each page's article is content.

The same arguments give the same bytes (a seeded `random.Random`). Every site
has its own template (words drawn for it), so sites differ; within a site,
each page draws its article's paragraphs afresh and a few of the site's
"related" lines, and may quote a line of another of its articles (content that
repeats on two or three pages, as a teaser does). A page of an article is
`<nav>`-less on purpose for some sites (`plain` templates), so that the page's
markup does not give its boilerplate away: only the site does.

    python -m devcorpus.site_crawl OUT.warc.gz --sites 40 --pages 50
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.sample import Capture, warc_bytes

WORDS = ("time year people way day man thing woman life child world school state family student group country "
         "problem hand part place case week company system program question work government number night point "
         "home water room mother area money story fact month lot right study book eye job word business issue side "
         "kind head house service friend father power hour game line end member law car city community name "
         "president team minute idea kid body information back parent face others level office door health person "
         "art war history party result change morning reason research girl guy moment air teacher force education "
         "river garden bridge market harbour valley forest island winter summer letter window station museum").split()


# The kinds of line: a page's own title and paragraphs (`article`), a paragraph of another article of its site
# (`teaser`: content on two pages or more), the lines of its site's template, on every page (`template`: menu,
# cookie notice, an editor's note in the article's body, newsletter, footer), and the site's "related" lines, two of them a page (`related`).
KINDS = ("article", "teaser", "template", "related")
CONTENT = ("article", "teaser")


@dataclass(frozen=True)
class GeneratedPage:
    url: str
    html: str
    # The page's lines, each with its kind (`KINDS`).
    lines: tuple[tuple[str, str], ...]

    def content(self) -> list[str]:
        return [line for line, kind in self.lines if kind in CONTENT]


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng, rng.randint(8, 18)) for _ in range(rng.randint(2, 4)))


def site_pages(site: int, pages: int, rng: random.Random) -> list[GeneratedPage]:
    """The pages of site number `site`: a template of its own, articles of their own."""
    domain = f"site{site:04d}-example.{rng.choice(('com', 'org', 'co.uk', 'net'))}"
    plain = site % 3 == 0
    menu = [rng.choice(WORDS).capitalize() for _ in range(rng.randint(4, 8))]
    footer = [f"Copyright {2000 + site % 25} {domain}. All rights reserved.",
              f"{_sentence(rng, 6)} Contact us at the {rng.choice(WORDS)} office."]
    notice = f"We use cookies to {rng.choice(WORDS)} your {rng.choice(WORDS)}. Accept all cookies?"
    related = [f"Related: {_sentence(rng, 5)}" for _ in range(rng.randint(3, 6))]
    newsletter = f"Subscribe to the {domain} newsletter for {rng.choice(WORDS)} news every week."
    # A paragraph of the site's in every article's body (an editor's note, a disclaimer): markup that says
    # article, text that says site.
    disclaimer = f"Editor's note: {_paragraph(rng)}"
    articles = [[_paragraph(rng) for _ in range(rng.randint(3, 9))] for _ in range(pages)]
    generated = []
    for number, paragraphs in enumerate(articles):
        title = _sentence(rng, 5)
        quoted = []
        if number and rng.random() < 0.3:
            # A teaser of another article of the site: content, on two pages.
            quoted = [rng.choice(articles[rng.randrange(number)])]
        chosen_related = rng.sample(related, 2)
        lines = ([(item, "template") for item in menu] + [(notice, "template"), (title, "article")]
                 + [(text, "article") for text in paragraphs] + [(text, "teaser") for text in quoted]
                 + [(disclaimer, "template")]
                 + [(item, "related") for item in chosen_related] + [(newsletter, "template")]
                 + [(item, "template") for item in footer])
        body = "".join(f"<div>{text}</div>" for text, _ in lines) if plain else (
            "<nav><ul>" + "".join(f"<li><a href='/{item.lower()}'>{item}</a></li>" for item in menu) + "</ul></nav>"
            + f"<div class='cookie-banner'>{notice}</div><article><h1>{title}</h1>"
            + "".join(f"<p>{text}</p>" for text in paragraphs + quoted) + f"<p>{disclaimer}</p></article><aside>"
            + "".join(f"<p>{item}</p>" for item in chosen_related) + f"</aside><div>{newsletter}</div><footer>"
            + "".join(f"<p>{item}</p>" for item in footer) + "</footer>")
        html = f"<!DOCTYPE html><html lang='en'><head><title>{title}</title></head><body>{body}</body></html>"
        generated.append(GeneratedPage(f"https://{'www' if number % 2 else 'news'}.{domain}/a/{number}", html,
                                       tuple(lines)))
    return generated


def generate_crawl(sites: int, pages: int, seed: int = 0) -> list[GeneratedPage]:
    """`sites` sites of `pages` pages each, in the order of sites."""
    rng = random.Random(seed)
    return [page for site in range(sites) for page in site_pages(site, pages, rng)]


def crawl_warc(crawl: list[GeneratedPage]) -> bytes:
    return warc_bytes([Capture(page.url, page.html.encode("utf-8")) for page in crawl])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--sites", type=int, default=40)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    arguments.output.write_bytes(crawl_warc(generate_crawl(arguments.sites, arguments.pages, arguments.seed)))
    print(f"{arguments.output}: {arguments.sites} sites of {arguments.pages} pages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
