"""CleanHtml's rule and its parts, one job a module; `transforms/stages/clean_html/clean_html.py` assembles them.

- `rules`: the rule as data: which tags go, which unwrap, what hides an
  element, and the table by tag id that both walks read.
- `metadata`: rule 1, the title, links, language and `<meta>` values.
- `links`: the links resolved to absolute http(s) URLs.
- `text`: whitespace and the entities a page escaped twice.
- `css_selectors`: lexbor's CSS engine, one parser a thread, and the user's selectors checked.
- `c_walk`: the walk in C (`transforms/native/_lexbor_walk.c`), bound to selectolax's lexbor.
- `python_walk`: the pure-Python path that stands in for it, with lexbor's tree operations.
- `main_content`: with `--main-content`, which blocks are the page's main content, from features the walk collects.
- `python_features`: those features on the pure-Python path, as the C walk collects them.
- `page`: what cleaning gives (`CleanedPage`) and the document it makes.
- `guard`: which pages are cleaned in a child process, and the cleaner that sends them there.

None imports Beam: the child process that cleans the pages `guard` sends
away imports them, and starts in a tenth of the time and memory that Beam
would take.
"""
