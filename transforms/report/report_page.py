"""The run report to look at: `DIR/report.html`, one self-contained page.

Beside `report.json` each build writes `report.html`, which opens from disk
with no network: everything (styles, charts as inline SVG, a few lines of
script) is in the file. It shows

* the run at a glance: records by outcome, bytes at each stage, skips and
  dead letters by kind, charsets, per-file rows (sortable tables);
* a page inspector: a deterministic sample of kept pages, each shown as the
  original page (rendered in a sandboxed frame with scripts disabled and
  every request blocked) beside the text that was kept, with what CleanHtml
  dropped highlighted in the original;
* the dead letters (the first `MAX_DEAD_LETTERS` by file and offset) and a
  sample of each skip kind, with their reasons;
* with --tokenizer, the tokens kept and dropped, and for documents with signals
  (--annotate) each signal's histogram, its threshold marked
  (`report_page_signals`).

Nothing here holds what grows with the input: what to show is chosen in
bounded state (`report_page_transform.WriteReportPage`), and only the sampled
pages are read again from their WARC files, and cleaned again with the
build's settings, by the one step that writes the page (`write_report_page`).
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import re

from apache_beam.io.filesystems import FileSystems
from selectolax.lexbor import LexborHTMLParser

from transforms.stages.charset import decode_document
from transforms.stages.clean_html.css_selectors import css
from transforms.stages.clean_html.rules import (CODE_TAGS, DROP_TAGS, HIDDEN_STYLE, HIDING_ATTRIBUTES, HIDING_TAGS,
                                                METADATA_TAGS, is_hidden_element)
from transforms.document import Document, read_at
from transforms.stages.clean_html.clean_html import HtmlCleaner
from transforms.filesystems.http_filesystem import serves_ranges  # (and FileSystems reads https:// and http:// with it)
from transforms.report.manifest import DigestingHandle, FileDigest
from transforms.stages.minimize_text import minimize_blocks
from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.stages.read_warc.read_warc import open_uncompressed, read_warc
from transforms.stages.site_boilerplate import SiteBoilerplate, line_hash, site_of
from transforms.report.report import byte_stages, outcomes_of
from transforms.report.report_page_signals import signals_html, tokens_html

REPORT_PAGE_NAME = "report.html"
DEFAULT_SAMPLE_SIZE = 20
SKIPS_PER_KIND = 5
MAX_DEAD_LETTERS = 1000
# A sampled page is embedded up to this many characters of its HTML.
MAX_EMBEDDED_CHARACTERS = 1 << 20

# Inside the frame nothing may be fetched: a policy that allows inline
# styles and data: images only, first in the document so that it governs
# every resource after it.
FRAME_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
                "form-action 'none'; base-uri 'none'")
DROPPED_ATTRIBUTE = "data-webcorpus-dropped"
FRAME_STYLE = (
    f"[{DROPPED_ATTRIBUTE}]{{outline:2px dashed #c62828 !important;background:rgba(229,57,53,.14) !important;}}"
    f"[{DROPPED_ATTRIBUTE}=hidden]{{display:block !important;visibility:visible !important;opacity:1 !important;}}"
)
# Attributes that make a browser fetch something (or navigate) on their own.
FETCHING_ATTRIBUTES = ("src", "srcset", "data", "poster", "background", "action", "formaction", "ping",
                       "imagesrcset", "lowsrc", "dynsrc", "manifest", "codebase", "archive", "xlink:href")
# Elements that fetch, navigate or run code whatever their attributes: removed from the frame.
REMOVED_TAGS = ("script", "link", "base", "frame", "frameset", "iframe", "embed", "applet", "portal")
# What CleanHtml drops by tag, highlighted; code, styling and metadata, never shown, need no highlight.
HIGHLIGHTED_DROP_TAGS = frozenset(DROP_TAGS) - frozenset(CODE_TAGS + METADATA_TAGS)
CSS_FETCH = re.compile(r"url\s*\(|@import|image-set\s*\(|image\s*\(|-webkit-image-set\s*\(", re.IGNORECASE)


# --- The original page, made safe and marked ---------------------------------

def _defuse_css(text: str) -> str:
    # An unknown function or at-rule is ignored by CSS without a word.
    return CSS_FETCH.sub(lambda match: "blocked-" + match.group().lstrip("@"), text)


def _mark(node, reason: str) -> None:
    if node.attributes.get(DROPPED_ATTRIBUTE) is None:
        node.attrs[DROPPED_ATTRIBUTE] = reason


def marked_original(page: str, drop_selectors: tuple[str, ...] = ()) -> str:
    """The page as it can be shown offline: nothing fetched or run, what CleanHtml drops marked.

    Each element CleanHtml drops with its content gets the attribute
    `data-webcorpus-dropped` (its tag, `hidden` or `selector`); the page's
    own style shows hidden ones, with the highlight, so that they can be seen.
    """
    tree = LexborHTMLParser(page)
    if tree.root is None:
        return ""
    user_selector = ", ".join(drop_selectors)
    if user_selector and tree.body is not None:
        for node in css(tree.body, user_selector):
            _mark(node, "selector")
    for node in list(tree.root.traverse()):
        tag = node.tag
        if tag in REMOVED_TAGS:
            node.decompose()
            continue
        attributes = node.attributes
        if tag in HIGHLIGHTED_DROP_TAGS:
            _mark(node, tag)
        elif (not attributes.keys().isdisjoint(HIDING_ATTRIBUTES) or tag in HIDING_TAGS) and is_hidden_element(node):
            _mark(node, "hidden")
            # Shown with the highlight, so that what was hidden can be seen.
            if "hidden" in attributes:
                del node.attrs["hidden"]
            if attributes.get("style"):
                node.attrs["style"] = HIDDEN_STYLE.sub("", attributes["style"])
            attributes = node.attributes
        for name in FETCHING_ATTRIBUTES:
            if name in attributes:
                del node.attrs[name]
        if tag == "a" and "href" in attributes:
            node.attrs["data-href"] = attributes["href"] or ""
            del node.attrs["href"]
        if tag == "meta" and (attributes.get("http-equiv") or "").lower() in ("refresh", "content-security-policy"):
            node.decompose()
            continue
        if attributes.get("style"):
            node.attrs["style"] = _defuse_css(attributes["style"])
        if tag == "style" and node.first_child is not None:
            node.first_child.replace_with(_defuse_css(node.first_child.text_content or ""))
    # Before the page's own markup, the policy governs every resource after it.
    return (f'<meta http-equiv="Content-Security-Policy" content="{FRAME_POLICY}"><style>{FRAME_STYLE}</style>'
            + (tree.html or ""))


# --- Reading the sampled pages again ------------------------------------------

@dataclasses.dataclass(frozen=True)
class InspectedPage:
    url: str
    source_file: str
    source_offset: int
    charset: str
    kept_blocks: tuple[str, ...]
    original: str
    note: str = ""
    # With --main-content: the blocks dropped as boilerplate (what CleanHtml drops is marked in `original`).
    boilerplate_blocks: tuple[str, ...] = ()
    # With --site-boilerplate: the blocks of main content (or of the page) removed as lines repeated on its site.
    site_blocks: tuple[str, ...] = ()


def _document_at(path: str, offset: int, max_page_bytes: int) -> Document | None:
    # Searching from one byte before finds a record that starts at `offset`
    # itself; a file gzipped as a whole is read from its start.
    for start in dict.fromkeys((max(offset - 1, 0), 0)):
        # What reading it notes was noted when the build read it.
        for outcome in read_warc(lambda: open_uncompressed(path), path, start, on_note=lambda note: None,
                                 max_page_bytes=max_page_bytes):
            at = read_at(outcome)
            if at == offset and isinstance(outcome, Document):
                return outcome
            if at > offset:
                break
    return None


@functools.lru_cache(maxsize=4)
def _cleaner(drop_selectors: tuple[str, ...], main_content: bool = False) -> HtmlCleaner:
    # One per build's selectors: making one validates them, for every sampled page otherwise.
    return HtmlCleaner(drop_selectors, main_content)


def inspect_page(fingerprint, drop_selectors: tuple[str, ...], scripts,
                 max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES, sources: dict[str, str] | None = None,
                 main_content: bool = False, site_boilerplate: SiteBoilerplate | None = None,
                 site_lines: frozenset = frozenset()) -> InspectedPage:
    """A sampled page read again from its WARC file, cleaned again, and its original marked.

    `sources`: the paths to read, by the names written where they differ (URLs with credentials: `locations`).
    With `site_boilerplate`, the blocks whose (site, line hash) is among `site_lines` are told apart.
    """
    capture = fingerprint.capture
    where = dict(url=capture.url, source_file=capture.source_file, source_offset=capture.source_offset)
    path = (sources or {}).get(capture.source_file, capture.source_file)
    try:
        if not serves_ranges(path):
            return InspectedPage(**where, charset="", kept_blocks=(), original="",
                                 note="not read again: its server ignores Range requests, so each page would "
                                      "download the file again from its start")
        doc = _document_at(path, capture.source_offset, max_page_bytes)
    except Exception as error:  # noqa: BLE001 - the inspector shows why, the build is not at stake
        return InspectedPage(**where, charset="", kept_blocks=(), original="", note=f"cannot read it again: {error}")
    if doc is None:
        return InspectedPage(**where, charset="", kept_blocks=(), original="",
                             note="its record was not found again in the input file")
    decoded = decode_document(doc)
    page = decoded.utf8_payload.decode("utf-8", "replace")
    cleaned = _cleaner(drop_selectors, main_content).clean(decoded.utf8_payload, capture.url)
    blocks, repeated = cleaned.blocks, []
    if site_boilerplate is not None:
        site = site_of(capture.url, site_boilerplate.scope)
        repeated = [block for block in blocks if (site, line_hash(block)) in site_lines]
        blocks = [block for block in blocks if (site, line_hash(block)) not in site_lines]
    kept = tuple(filter(None, minimize_blocks(blocks, scripts)))
    boilerplate = tuple(filter(None, minimize_blocks(cleaned.boilerplate, scripts)))
    note = ""
    if len(page) > MAX_EMBEDDED_CHARACTERS:
        page = page[:MAX_EMBEDDED_CHARACTERS]
        note = f"the original is shown up to its first {MAX_EMBEDDED_CHARACTERS:,} characters"
    return InspectedPage(**where, charset=decoded.charset, kept_blocks=kept,
                         original=marked_original(page, drop_selectors), note=note, boilerplate_blocks=boilerplate,
                         site_blocks=tuple(filter(None, minimize_blocks(repeated, scripts))))


# --- The page ----------------------------------------------------------------

PAGE_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#cfd8dc}
main{padding:16px 24px}section{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:0 0 16px;
padding:12px 16px}h2{font-size:16px;margin:4px 0 10px}
.cards{display:flex;gap:10px;flex-wrap:wrap}.card{border:1px solid #dde1e6;border-radius:6px;padding:8px 12px;
min-width:110px}.card b{display:block;font-size:20px}.bad{color:#c62828}.good{color:#2e7d32}
.charts{display:flex;gap:24px;flex-wrap:wrap}.chart h3{font-size:13px;margin:0 0 4px}
table{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid #eceff1;
text-align:left;vertical-align:top}td.n,th.n{text-align:right}th{cursor:pointer;background:#eceff1;
user-select:none}th[aria-sort=ascending]:after{content:" \\25b2"}th[aria-sort=descending]:after{content:" \\25bc"}
.wrap{max-width:100%;overflow:auto}
#inspector{display:grid;grid-template-columns:260px 1fr 1fr;gap:10px;min-height:560px}
#pages{list-style:none;margin:0;padding:0;overflow:auto;max-height:640px;border-right:1px solid #dde1e6}
#pages li{padding:5px 6px;cursor:pointer;border-bottom:1px solid #eceff1;word-break:break-all;font-size:12px}
#pages li.current{background:#e3f2fd}#original{width:100%;height:640px;border:1px solid #dde1e6;background:#fff}
#kept{height:640px;overflow:auto;border:1px solid #dde1e6;padding:6px 10px;font-size:13px}
#kept p{margin:0 0 6px}.legend{font-size:12px;color:#546e7a}
.swatch{display:inline-block;width:12px;height:12px;outline:2px dashed #c62828;background:rgba(229,57,53,.14);
vertical-align:middle;margin-right:4px}
"""

# With --main-content, the inspector lists the blocks dropped as boilerplate after the kept ones, struck through;
# with --site-boilerplate, the lines removed as repeated on the site, struck through in another colour (a build
# without them has the page it had: `page_script`).
BOILERPLATE_SCRIPT_MARK = "<boilerplate>"
STRUCK_SCRIPT = """    (page.FIELD || []).forEach(function (block) {
      var line = document.createElement('p');
      line.textContent = block;
      line.title = 'TITLE';
      line.style.cssText = 'color:COLOUR;text-decoration:line-through';
      kept.appendChild(line);
    });
"""
BOILERPLATE_SCRIPT = (STRUCK_SCRIPT.replace("FIELD", "boilerplate").replace("COLOUR", "#8d6e63")
                      .replace("TITLE", "dropped as boilerplate (--main-content)"))
SITE_BOILERPLATE_SCRIPT = (STRUCK_SCRIPT.replace("FIELD", "site_boilerplate").replace("COLOUR", "#6a1b9a")
                           .replace("TITLE", "removed as a line repeated on its site (--site-boilerplate)"))


def page_script(main_content: bool, site_boilerplate: bool = False) -> str:
    struck = (BOILERPLATE_SCRIPT if main_content else "") + (SITE_BOILERPLATE_SCRIPT if site_boilerplate else "")
    return PAGE_SCRIPT.replace(BOILERPLATE_SCRIPT_MARK + "\n", struck)


PAGE_SCRIPT = """
(function () {
  function cellValue(row, index) {
    var cell = row.cells[index];
    var value = cell.getAttribute('data-value');
    return value === null ? cell.textContent : Number(value);
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, index) {
      header.addEventListener('click', function () {
        var ascending = header.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute('aria-sort'); });
        header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          var order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  var data = document.getElementById('inspected');
  if (!data) { return; }
  var pages = JSON.parse(data.textContent);
  var list = document.getElementById('pages');
  var frame = document.getElementById('original');
  var kept = document.getElementById('kept');
  var about = document.getElementById('about');
  function show(index) {
    var page = pages[index];
    Array.prototype.forEach.call(list.children, function (item, i) {
      item.className = i === index ? 'current' : '';
    });
    frame.srcdoc = page.original;
    kept.textContent = '';
    page.kept.forEach(function (block) {
      var line = document.createElement('p');
      line.textContent = block;
      kept.appendChild(line);
    });
""" + BOILERPLATE_SCRIPT_MARK + """
    about.textContent = page.url + ' (' + page.source_file + ' at offset ' + page.source_offset +
      (page.charset ? ', ' + page.charset : '') + ')' + (page.note ? ': ' + page.note : '');
  }
  pages.forEach(function (page, index) {
    var item = document.createElement('li');
    item.textContent = page.url;
    item.addEventListener('click', function () { show(index); });
    list.appendChild(item);
  });
  if (pages.length) { show(0); }
  document.body.setAttribute('data-ready', 'true');
})();
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def bar_chart(title: str, values: dict[str, int], width: int = 520) -> str:
    """A horizontal bar chart as inline SVG (no script, no fetch)."""
    if not values:
        return f'<div class="chart"><h3>{_e(title)}</h3><p class="legend">none</p></div>'
    label_width, bar_width, row = 200, width - 200 - 100, 20
    largest = max(values.values()) or 1
    height = row * len(values) + 4
    bars = []
    for index, (label, value) in enumerate(values.items()):
        y = index * row + 2
        length = max(round(bar_width * value / largest), 1 if value else 0)
        bars.append(
            f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end" font-size="12">{_e(label[:32])}</text>'
            f'<rect x="{label_width}" y="{y + 3}" width="{length}" height="{row - 6}" fill="#42a5f5">'
            f"<title>{_e(label)}: {value:,}</title></rect>"
            f'<text x="{label_width + length + 4}" y="{y + 14}" font-size="12">{value:,}</text>')
    return (f'<div class="chart"><h3>{_e(title)}</h3><svg xmlns="http://www.w3.org/2000/svg" role="img" '
            f'aria-label="{_e(title)}" width="{width}" height="{height}">{"".join(bars)}</svg></div>')


def sortable_table(header: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    head = "".join(f'<th class="n">{_e(name)}</th>' if index in numeric else f"<th>{_e(name)}</th>"
                   for index, name in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for index, value in enumerate(row):
            if index in numeric:
                cells.append(f'<td class="n" data-value="{value}">{value:,}</td>')
            else:
                cells.append(f"<td>{_e(value)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="wrap"><table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _glance(report: dict) -> str:
    records = report["records"]
    outcomes = outcomes_of(report.get("options", {}))
    balanced = records.get("balanced")
    cards = [f'<div class="card">{_e(name.replace("_", " "))}<b>{records.get(name, 0):,}</b></div>'
             for name in ("read",) + outcomes]
    cards.append(f'<div class="card">balanced<b class="{"good" if balanced else "bad"}">'
                 f'{"yes" if balanced else "NO"}</b></div>')
    sizes = report.get("bytes", {})
    charts = [
        bar_chart("Records by outcome", {name.replace("_", " "): records.get(name, 0) for name in outcomes}),
        bar_chart("Bytes at each stage (kept documents)", {label: sizes.get(name, 0) for name, label in byte_stages(report.get("options", {}))}),
        bar_chart("Skipped, by kind", report.get("skipped", {})),
        bar_chart("Dead letters, by stage", report.get("dead_letter", {})),
        bar_chart("Charsets (kept documents)", report.get("charsets", {})),
    ]
    if report.get("languages"):
        charts.append(bar_chart("Languages (kept documents)", {
            language: (value["documents"] if isinstance(value, dict) else value)
            for language, value in report["languages"].items()}))
    return (f'<section id="glance"><h2>The run at a glance</h2><div class="cards">{"".join(cards)}</div>'
            f'<div class="charts">{"".join(charts)}</div></section>')


def _filters(report: dict) -> str:
    """What --quality and --pii did: documents and raw HTML bytes dropped per rule, lines removed per line rule,
    addresses replaced per kind (report.json's `filters`); nothing for a build without them."""
    filters = report.get("filters")
    if not filters:
        return ""
    dropped = sortable_table(["rule", "documents dropped", "raw HTML bytes dropped"], [
        [rule, count, filters["raw_bytes_dropped"].get(rule, 0)]
        for rule, count in filters["documents_dropped"].items()], numeric={1, 2})
    removed = sortable_table(["line rule", "lines removed"], [list(item) for item in filters["lines_removed"].items()],
                             numeric={1})
    replaced = sortable_table(["kind (--pii)", "replaced"], [list(item) for item in filters["pii_replaced"].items()],
                              numeric={1})
    per_language = sortable_table(["language (--quality fineweb2)", "outcome", "documents"], [
        [language, outcome, count] for language, outcomes in filters.get("per_language", {}).items()
        for outcome, count in outcomes.items()], numeric={2}) if filters.get("per_language") else ""
    return f'<section id="filters"><h2>Filters</h2>{dropped}{removed}{replaced}{per_language}</section>'


def _main_content(report: dict) -> str:
    """What --main-content dropped: the boilerplate's bytes, and the documents whose main content is all their text."""
    if not report.get("main_content"):
        return ""
    counts = report["main_content"]
    table = sortable_table(
        ["boilerplate dropped (div-only HTML bytes)", "documents whose main content is all their text"],
        [[counts["boilerplate_bytes_dropped"], counts["whole_page_documents"]]], numeric={0, 1})
    return f'<section id="main-content"><h2>Main content</h2>{table}</section>'


def _site_boilerplate(report: dict) -> str:
    """What --site-boilerplate removed, in all and for the domains most removed from."""
    removed = report.get("site_boilerplate")
    if not removed:
        return ""
    totals = sortable_table(["lines removed", "bytes removed (text)", "documents changed"], [
        [removed["lines_removed"], removed["bytes_removed"], removed["documents_changed"]]], numeric={0, 1, 2})
    domains = sortable_table(["domain", "lines removed", "bytes removed (text)", "documents changed"], [
        [domain["domain"], domain["lines_removed"], domain["bytes_removed"], domain["documents_changed"]]
        for domain in removed["top_domains"]], numeric={1, 2, 3})
    return f'<section id="site-boilerplate"><h2>Site boilerplate</h2>{totals}{domains}</section>'


def _files(report: dict) -> str:
    columns = ("read",) + outcomes_of(report.get("options", {}))
    rows = [[path] + [counts.get(name, 0) for name in columns] + ["; ".join(counts.get("errors", []))]
            for path, counts in report.get("files", {}).items()]
    table = sortable_table(["file", *columns, "errors"], rows, numeric=set(range(1, len(columns) + 1)))
    return f'<section id="files"><h2>Input files</h2>{table}</section>'


def _inspector(pages: list[InspectedPage], main_content: bool = False, site_boilerplate: bool = False) -> str:
    if not pages:
        return ('<section id="inspector-section"><h2>Page inspector</h2>'
                '<p class="legend">No page was sampled (no kept page, or a sample size of 0).</p></section>')
    data = [dict(url=page.url, source_file=page.source_file, source_offset=page.source_offset,
                 charset=page.charset, kept=list(page.kept_blocks), original=page.original, note=page.note,
                 **({"boilerplate": list(page.boilerplate_blocks)} if main_content else {}),
                 **({"site_boilerplate": list(page.site_blocks)} if site_boilerplate else {}))
            for page in pages]
    boilerplate = (' Struck through after it: the blocks <code>--main-content</code> dropped as boilerplate.'
                   if main_content else '') + (
        ' Struck through in purple: the lines <code>--site-boilerplate</code> removed as repeated on the site.'
        if site_boilerplate else '')
    # `</` inside a script element would end it.
    encoded = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    return (
        '<section id="inspector-section"><h2>Page inspector</h2>'
        f'<p class="legend">{len(pages)} kept pages, the same sample on every build. Left: the original page '
        'with scripts disabled and nothing fetched; <span class="swatch"></span>what CleanHtml dropped '
        '(hidden elements are shown so that they can be seen). Right: the text that was kept, one block a line.'
        f'{boilerplate}</p>'
        '<p id="about" class="legend"></p>'
        '<div id="inspector"><ul id="pages"></ul>'
        '<iframe id="original" sandbox="" referrerpolicy="no-referrer" title="original page"></iframe>'
        '<div id="kept" aria-label="kept text"></div></div>'
        f'<script type="application/json" id="inspected">{encoded}</script></section>'
    )


def _side_records(title: str, anchor: str, records: list[dict], columns: tuple[str, ...], note: str = "") -> str:
    rows = [[record.get(column, "") for column in columns] for record in records]
    numeric = {index for index, column in enumerate(columns) if column == "source_offset"}
    table = sortable_table(list(columns), rows, numeric) if rows else '<p class="legend">none</p>'
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{note}{table}</section>'


def render_report_page(report: dict, pages: list[InspectedPage], skips: dict[str, list[dict]],
                       dead_letters: list[dict], main_content: bool = False, site_boilerplate: bool = False) -> str:
    """The whole `report.html`, from the report and what was chosen to show (`main_content`: the build kept only
    each page's main content, and the inspector tells its boilerplate apart; `site_boilerplate`: likewise, the
    lines repeated on its site)."""
    records = report.get("records", {})
    status = report.get("status", "")
    total_dead = records.get("dead_letter", 0)
    dead_note = (f'<p class="legend">The first {len(dead_letters):,} of {total_dead:,} by file and offset; all are in '
                 "dead-letter-*.jsonl.</p>") if total_dead > len(dead_letters) else ""
    skip_rows = [record for kind in sorted(skips) for record in skips[kind]]
    skip_note = (f'<p class="legend">Up to {SKIPS_PER_KIND} of each kind (the first by file and offset); all are '
                 "counted above and listed in skipped-*.jsonl, but for non-response records.</p>")
    inputs = ", ".join(report.get("options", {}).get("inputs", []))
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        f"script-src 'unsafe-inline'; img-src data:; frame-src 'self' about: data:\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>webcorpus run report</title><style>{PAGE_STYLE}</style></head><body>",
        f"<header><h1>webcorpus run report</h1><p>status {_e(status)} · inputs {_e(inputs)}</p></header><main>",
        _glance(report),
        _filters(report),
        tokens_html(report),
        signals_html(report),
        _main_content(report),
        _site_boilerplate(report),
        _files(report),
        _inspector(pages, main_content, site_boilerplate),
        _side_records("Dead letters", "dead-letters", dead_letters,
                      ("stage", "reason", "source_file", "source_offset", "url"), dead_note),
        _side_records("Skipped, a sample of each kind", "skips", skip_rows,
                      ("kind", "detail", "source_file", "source_offset", "url"), skip_note),
        f"</main><script>{page_script(main_content, site_boilerplate)}</script></body></html>\n",
    ])


def write_report_page(report_written: FileDigest, samples: list, skips: list, dead_letters: list, output_dir: str,
                      drop_selectors: tuple[str, ...], scripts, max_page_bytes: int,
                      sources: dict[str, str] | None = None, main_content: bool = False,
                      site_boilerplate: SiteBoilerplate | None = None, site_lines: list = ()) -> FileDigest:
    """Writes `output_dir/report.html` from the report written (`report_written`: report.json's digest); returns
    its digest, taken as it is written. The page's samples are cleaned again as the build cleaned them
    (`drop_selectors`, `scripts`, `main_content`, and `site_boilerplate`'s lines: `site_lines`, (site, line hash)
    of the lines it removed on the samples' sites)."""
    with FileSystems.open(report_written.path) as handle:
        report = json.loads(handle.read())
    removed = frozenset(map(tuple, site_lines))
    pages = [inspect_page(fingerprint, drop_selectors, scripts, max_page_bytes, sources, main_content,
                          site_boilerplate, removed)
             for fingerprint in samples]
    by_kind = {kind: [json.loads(record) for *_, record in sorted(chosen)] for kind, chosen in skips}
    dead = [json.loads(record) for *_, record in sorted(dead_letters)]
    path = FileSystems.join(output_dir, REPORT_PAGE_NAME)
    with DigestingHandle(FileSystems.create(path)) as handle:
        handle.write(render_report_page(report, pages, by_kind, dead, main_content,
                                        site_boilerplate is not None).encode("utf-8"))
    return handle.digest(path)
