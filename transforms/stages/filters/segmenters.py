"""Words per language as FineWeb-2 counts them (`--quality fineweb2`): the word tokenizer datatrove 0.10 assigns to
the language, from the optional extra `webcorpus[languages]` (requirements-languages.txt).

Each language pack names its segmenter (`words`, from datatrove's `tokenizer_assignment.csv`, as
`pipeline.fineweb2_packs` writes it): `spacy:CODE` (spaCy's blank tokenizer of CODE; `zh` with jieba, `ja` with
SudachiPy's core dictionary, in pieces of at most 40,000 UTF-8 bytes as datatrove cuts them; `xx`, the multilingual
one, is datatrove's whitespace tokenizer), `indic:CODE` (the Indic NLP Library's trivial tokenizer), `thai`
(PyThaiNLP's newmm-safe) or `kiwi` (kiwipiepy's Kiwi); a text's words are the tokens' texts, stripped, the empty ones
left out, as datatrove's are. datatrove's Stanza, Khmer, Lao, Tibetan and Burmese tokenizers have no segmenter here
(Stanza loads its models from a hub at run time). Where a language's segmenter is missing, its words are
`words.split_words`' (spaCy English's rules) if it is written with spaces, and it has no word rules if not
(`word_splitter`); `missing_segmenters` names them, the manifest records the packages that counted
(`segmenter_packages`), and `--rebuild` refuses other versions.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable
from importlib import metadata

from transforms.stages.filters.words import count_words, is_spaced, split_words

# The packages each kind of segmenter needs (distribution names, as the manifest records them).
PACKAGES = {"spacy": ("spacy",), "indic": ("indic-nlp-library",), "thai": ("pythainlp",),
            "kiwi": ("kiwipiepy", "kiwipiepy-model")}
# spaCy's tokenizers that are another package's segmenter: its Chinese one is jieba's and its Japanese one SudachiPy's
# (split mode A), called here without spaCy (the same tokens, without a Doc per page); its Vietnamese one needs pyvi.
# Its other tokenizers are rules that split each whitespace-separated chunk by itself (`_tokenizer` caches a chunk's).
SPACY_LANGUAGE_PACKAGES = {"zh": ("jieba",), "ja": ("sudachipy", "sudachidict-core"), "vi": ("spacy", "pyvi")}
# datatrove's tokenizers that no segmenter here stands for (a pack may name them; their words fall back).
UNSUPPORTED = frozenset({"stanza", "khmer", "lao", "tibetan", "burmese"})
EXTRA = "pip install 'webcorpus[languages]'"
JAPANESE_CHUNK_BYTES = 40_000
_KIWI_LONG_NUMBERS = re.compile("[0-9,]{20,}")


def check_segmenter(spec: str) -> str | None:
    """Why `spec` names no segmenter (`KIND` or `KIND:CODE`), or None."""
    kind, _, code = spec.partition(":")
    if kind not in PACKAGES and kind not in UNSUPPORTED:
        return f"no word segmenter {spec!r} (kinds: {', '.join(sorted({*PACKAGES, *UNSUPPORTED}))})"
    if kind in ("spacy", "indic") and not code:
        return f"word segmenter {spec!r} needs a language code ({kind}:CODE)"
    return None


def packages_of(spec: str) -> tuple[str, ...]:
    """The packages segmenter `spec` needs; () for one datatrove has that no segmenter here stands for."""
    kind, _, code = spec.partition(":")
    if kind in UNSUPPORTED:
        return ()
    if kind == "spacy" and code in SPACY_LANGUAGE_PACKAGES:
        return SPACY_LANGUAGE_PACKAGES[code]
    return PACKAGES[kind]


@functools.cache
def installed_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def is_available(spec: str) -> bool:
    packages = packages_of(spec)
    return bool(packages) and all(installed_version(package) for package in packages)


def segmenter_packages(specs: Iterable[str]) -> dict[str, str]:
    """The package and version of every installed segmenter among `specs`: what counted the words."""
    return {package: installed_version(package) for spec in sorted(set(specs)) if is_available(spec)
            for package in packages_of(spec)}


def missing_segmenters(specs: dict[str, str]) -> dict[str, str]:
    """Of `specs` (language -> segmenter), those not available, with the reason."""
    missing = {}
    for language, spec in sorted(specs.items()):
        if spec.partition(":")[0] in UNSUPPORTED:
            missing[language] = f"datatrove's {spec} tokenizer has no segmenter here"
        elif not is_available(spec):
            lacking = [package for package in packages_of(spec) if not installed_version(package)]
            missing[language] = f"{spec} needs {', '.join(lacking)} ({EXTRA})"
    return missing


def japanese_chunks(text: str, limit: int = JAPANESE_CHUNK_BYTES) -> list[str]:
    """`text` in pieces of at most `limit` UTF-8 bytes, cut where datatrove cuts them (SudachiPy takes at most
    49,149 bytes): from a guess by the text's mean bytes per character, moved ten characters at a time."""
    size = len(text.encode("utf-8"))
    guess = int(max(limit * (len(text) / size if size else 1) - 10, 1))
    chunks = []
    rest = text
    while rest:
        if len(rest[:guess].encode("utf-8")) > limit:
            guess = max(guess - 10, 1)
            continue
        cut = guess
        part = rest[:cut]
        while len(part.encode("utf-8")) < limit and part != rest:
            cut = min(len(rest), cut + 10)
            part = rest[:cut]
        if len(part.encode("utf-8")) > limit:
            cut -= 10
        chunks.append(rest[:cut])
        rest = rest[cut:]
    return chunks


@functools.cache
def _tokenizer(spec: str) -> Callable[[str], list[str]]:
    """The tokens of a text by segmenter `spec`, whitespace tokens included; loaded once per process."""
    kind, _, code = spec.partition(":")
    if spec == "spacy:zh":
        import jieba

        jieba.setLogLevel(logging.WARNING)

        # jieba cuts each run of Han characters, letters and digits by itself: a whitespace-separated chunk's words
        # are the same in any text.
        @functools.lru_cache(maxsize=1 << 14)
        def chinese_words(chunk: str) -> tuple[str, ...]:
            return tuple(jieba.cut(chunk, cut_all=False))

        return lambda text: [word for chunk in text.split() for word in chinese_words(chunk)]
    if spec == "spacy:ja":
        from sudachipy import Dictionary, SplitMode

        sudachi = Dictionary().tokenizer(mode=SplitMode.A)
        return lambda text: [morpheme.surface() for chunk in japanese_chunks(text)
                             for morpheme in sudachi.tokenize(chunk)]
    if kind == "spacy":
        import spacy

        tokenizer = spacy.blank(code).tokenizer
        if code in SPACY_LANGUAGE_PACKAGES:
            return lambda text: [token.text for token in tokenizer(text)]

        # Words repeat across a page and across pages: most chunks are split once (spaCy's own cache is smaller,
        # and a Doc per page costs more than its tokens). A special case of several chunks (`EE. UU.` in Spanish)
        # applies where the text holds it as written: such a text is split whole.
        across_chunks = tuple(rule for rule in tokenizer.rules if len(rule.split()) > 1)

        @functools.lru_cache(maxsize=1 << 16)
        def chunk_tokens(chunk: str) -> tuple[str, ...]:
            return tuple(token.text for token in tokenizer(chunk))

        def tokens(text: str) -> list[str]:
            if any(rule in text for rule in across_chunks):
                return [token.text for token in tokenizer(text)]
            return [token for chunk in text.split() for token in chunk_tokens(chunk)]

        return tokens
    if kind == "indic":
        from indicnlp.tokenize.indic_tokenize import trivial_tokenize

        return lambda text: trivial_tokenize(text, code)
    if kind == "thai":
        from pythainlp.tokenize import word_tokenize

        return lambda text: word_tokenize(text, keep_whitespace=False, engine="newmm-safe")
    from kiwipiepy import Kiwi

    kiwi = Kiwi(model_type="sbg")
    # (As datatrove does: the offsets of the text without its long digit runs, read off the text itself.)
    return lambda text: [text[token.start:token.end] for token in kiwi.tokenize(_KIWI_LONG_NUMBERS.sub("", text))]


@functools.cache
def segmenter(spec: str) -> Callable[[str], tuple[str, ...]]:
    """A text's words by segmenter `spec` (installed): its tokens, stripped, the empty ones left out. The last
    few texts' are kept: the rule families count the words of one text each."""
    tokenize = _tokenizer(spec)

    @functools.lru_cache(maxsize=4)
    def words(text: str) -> tuple[str, ...]:
        return tuple(stripped for token in tokenize(text) if (stripped := token.strip()))

    return words


def word_splitter(language: str, spec: str | None = None) -> Callable[[str], tuple[str, ...]] | None:
    """How the word rules split a text of `language`: by segmenter `spec` where it is given and installed, else by
    `split_words` if the language is written with spaces; None (no word rules) if not."""
    if spec and is_available(spec):
        return segmenter(spec)
    return split_words if is_spaced(language) else None


def word_counter(language: str, spec: str | None = None) -> Callable[[str], int] | None:
    """How many words `word_splitter(language, spec)` splits a text into, or None (no word rules): `split_words`'
    counted without making them (`words.count_words`)."""
    split = word_splitter(language, spec)
    if split is None:
        return None
    if split is split_words:
        return count_words
    return lambda text: len(split(text))


def word_counting(specs: dict[str, str]) -> dict:
    """What counts the words of `specs`' languages (language -> segmenter) here, as the manifest records it: the
    installed segmenters' packages and versions, and the languages counted without their own segmenter."""
    return {"packages": segmenter_packages(specs.values()),
            "fallback": sorted(language for language, spec in specs.items() if not is_available(spec))}
