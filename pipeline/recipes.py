"""The recipes of `--recipe NAME`: the options of the corpora people build, by name (docs/recipes.md).

A recipe is the flags it stands for; the user's own flags win over the recipe's where both give one. The build's
settings are the expanded options, so its manifest records them (and the recipe's name), and `--rebuild` repeats them.
"""

from __future__ import annotations

import argparse

from transforms.stages.compress_write.schema import CLEAN_TEXT

# The readable text once, in Parquet's columns, beside what a reader of a language-model corpus filters on.
LLM_FIELDS = "--fields=url,warc_date,title,clean_text"
LLM_RULES = ("--quality", "fineweb-recipe", "--clean-text", "--near-dedup", "--pii", "--respect-opt-out",
             "--format", "parquet", LLM_FIELDS)
RECIPES = {
    "llm-english": ("--languages", "en", *LLM_RULES),
    # Every script's letters in the minimized text: pages in scripts left out would all minimize alike.
    "llm-multilingual": ("--scripts", "all", *LLM_RULES),
    "llm-russian": ("--languages", "ru", *LLM_RULES),
    "search-index": ("--main-content", "--near-dedup", "--language", "--format", "jsonl",
                     "--fields=url,warc_date,title,meta,clean_text"),
    "archive": ("--clean-text", "--language", "--scripts", "all"),
}


def with_recipe(parser: argparse.ArgumentParser, known: argparse.Namespace) -> argparse.Namespace:
    """`known` with the options of its `--recipe` set where the user gave none of their own."""
    if known.recipe is None:
        return known
    recipe = parser.parse_args(RECIPES[known.recipe])
    expanded = argparse.Namespace(**vars(known))
    for name, value in vars(recipe).items():
        default = parser.get_default(name)
        if value != default and getattr(known, name) == default:
            setattr(expanded, name, value)
    return expanded


def unreadable_text_note(settings) -> str | None:
    """Why a build with language-model rules that writes no readable text should say so, or None.

    `text` is the minimized text (lowercased, punctuation dropped): the rules read the readable text, and a corpus
    for a language model wants it, but `clean_text` is written only when asked for, and the default fields of
    existing builds stay as they are.
    """
    if settings.quality and CLEAN_TEXT not in settings.written_fields():
        return (f"note: --quality without --clean-text: the corpus holds only the minimized text (lowercased, no "
                f"punctuation), not the readable {CLEAN_TEXT}; add --clean-text (or use a --recipe, which sets it)")
    return None
