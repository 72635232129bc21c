"""CleanHtml's walk in C (`transforms/native/_lexbor_walk.c`), bound to selectolax's lexbor: `WALK`, or None.

One walk over lexbor's tree collects the metadata and writes the blocks,
deciding per element by its tag id (`rules.KINDS`) and its attributes, with
`rules.is_hidden` asked about the candidates for rule 2 and the user's
selectors matched once by lexbor's CSS engine; asked for them, it also
collects each block's features for main content (`main_content.bind` gives it
their tables). The tree is read, not
modified: the blocks are what `python_walk` gives by removing, unwrapping,
merging adjacent text nodes and lexbor's `text()`.
"""

from __future__ import annotations

import importlib.metadata

import selectolax.lexbor

from transforms import native
from transforms.stages.clean_html import main_content
from transforms.stages.clean_html.rules import KIND_NAMES, KINDS, is_hidden, tag_id


def bind_walk():
    """The C walk, bound to selectolax's lexbor; None, with one warning, when it cannot be.

    The walk was compiled against the lexbor headers of one selectolax release (lexbor_headers.py): it
    binds only to that release, with the lexbor version its headers declare."""
    walk = native.load("_lexbor_walk")
    if walk is None:
        return None
    try:
        differing = [name for value, name in enumerate(KIND_NAMES) if getattr(walk, name, None) != value]
        if differing:
            raise ImportError(f"its {', '.join(differing)} differ from transforms.stages.clean_html.rules'")
        if not hasattr(walk, "SELECTOLAX_VERSION"):
            raise ImportError("it was built without lexbor's headers, by an older webcorpus; rebuild webcorpus")
        mismatch = lexbor_mismatch(walk.SELECTOLAX_VERSION, walk.LEXBOR_VERSION)
        if mismatch:
            raise ImportError(mismatch)
        walk.bind(selectolax.lexbor.__file__, KINDS, tag_id("noscript"), is_hidden)
        main_content.bind(walk)
    except (ImportError, ValueError, RuntimeError) as error:
        native.refuse("_lexbor_walk", f"it cannot bind to selectolax's lexbor ({error})")
        return None
    return walk


def lexbor_mismatch(headers_selectolax: str, headers_lexbor: tuple[int, int, int]) -> str | None:
    """Why the installed selectolax is not the one whose lexbor headers the walk was compiled against
    (`headers_selectolax`, with lexbor `headers_lexbor`); None when it is. selectolax says which lexbor
    major and minor version it was built with (lexbor has no run-time version of its own)."""
    installed = importlib.metadata.version("selectolax")
    if installed != headers_selectolax:
        return (f"the walk was compiled against selectolax {headers_selectolax}'s lexbor headers, and selectolax "
                f"{installed} is installed; rebuild webcorpus (pip install .)")
    running = (selectolax.lexbor.LEXBOR_VERSION_MAJOR, selectolax.lexbor.LEXBOR_VERSION_MINOR)
    if running != tuple(headers_lexbor[:2]):
        return (f"selectolax's module runs lexbor {'.'.join(map(str, running))} and the walk was compiled against "
                f"lexbor {'.'.join(map(str, headers_lexbor))}'s headers")
    return None


WALK = bind_walk()
