"""The language packs of `--quality fineweb2`, generated from FineWeb-2's per-language configurations.

    python -m pipeline.fineweb2_packs /path/to/fineweb-2/configs \
        --tokenizers /path/to/datatrove/assets/tokenizer_assignment.csv \
        --output transforms/stages/filters/data/fineweb2_packs.json

FineWeb-2 (HuggingFaceFW/fineweb-2, Apache-2.0) tunes its filters per language in `configs/{iso3}_{Script}.yml`
(1,929 files): stop words, the duplicate-line share, the top and duplicated n-gram shares, the word-length bounds,
the share of words with a letter, the lines ending in punctuation, newlines per word and a minimum language score.
A pack is written for every language that both lid.176 (the language identifier, `transforms/stages/language.py`)
gives and FineWeb-2 configures: lid.176's code (Wikipedia's, ISO 639-1 where there is one) is matched to one
configuration by `configuration_of`. The thresholds are named as `--quality-threshold` names them (`FAMILY.RULE`),
each key of a configuration as FineWeb-2's pipeline script passes it to datatrove's filter (`PACK_THRESHOLDS`).
Each pack's word segmenter (`words`) is the word tokenizer datatrove (Apache-2.0), which FineWeb-2's pipeline runs,
assigns to the configuration in its `tokenizer_assignment.csv` (`read_tokenizers`). Each pack's `min_confidence`, the
threshold applied to lid.176's confidence, is decided from FineWeb-2's score and lid.176's confidence measured on
pages of the language (`--confidence`, the project's table by default: `min_confidence`). A newer FineWeb-2 release
is this one command; the file's `notice` says where the numbers come from.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import pycountry
import yaml

from transforms.stages.filters import gopher
from transforms.stages.filters.fineweb2 import DEFAULT_PACKS, FORMAT, NOTICE, SCALAR_KEYS, check_packs
from transforms.stages.language import known_languages

# lid.176's codes whose FineWeb-2 configuration is not the ISO 639-3 code pycountry gives: a macrolanguage, which
# FineWeb-2 (GlotLID) splits into its languages (the one lid.176's training text, Wikipedia, is written in), a
# Wikipedia code that is another language's ISO 639-3 code (`als`, Alemannic on Wikipedia, Tosk Albanian in ISO),
# and codes pycountry does not know. English has none: FineWeb-2 is FineWeb's non-English part.
CONFIGURATIONS = {
    "als": "gsw_Latn", "ar": "arb_Arab", "az": "azj_Latn", "bh": "bho_Deva", "et": "ekk_Latn", "gn": "gug_Latn",
    "ku": "kmr_Latn", "kv": "kpv_Cyrl", "lv": "lvs_Latn", "mg": "plt_Latn", "mn": "khk_Cyrl", "ms": "zsm_Latn",
    "ne": "npi_Deva", "no": "nob_Latn", "or": "ory_Orya", "ps": "pbt_Arab", "qu": "quz_Latn", "sq": "als_Latn",
    "sw": "swh_Latn", "tl": "fil_Latn", "uz": "uzn_Latn", "yi": "ydd_Hebr", "zh": "cmn_Hani",
}
# Where FineWeb-2 configures a language in several scripts (its own and a romanization, or two of its own): the
# script its Wikipedia, lid.176's training text, is written in.
SCRIPTS = {
    "as": "Beng", "bn": "Beng", "gom": "Deva", "gu": "Gujr", "hi": "Deva", "kn": "Knda", "min": "Latn", "ml": "Mlym",
    "mr": "Deva", "pa": "Guru", "ro": "Latn", "sa": "Deva", "sd": "Arab", "sr": "Cyrl", "ta": "Taml", "te": "Telu",
    "tk": "Latn", "tt": "Cyrl", "ug": "Arab", "ur": "Arab",
}


def iso3_of(code: str) -> str:
    """The ISO 639-3 code of lid.176's `code` (pycountry), or "" for one it does not know."""
    found = pycountry.languages.get(alpha_2=code) if len(code) == 2 else pycountry.languages.get(alpha_3=code)
    return found.alpha_3 if found else ""


def configuration_of(code: str, configured: dict[str, list[str]]) -> str | None:
    """The FineWeb-2 configuration (`iso3_Script`) of lid.176's `code`, from `configured` (ISO 639-3 -> scripts),
    or None; raises ValueError for a language configured in several scripts that `SCRIPTS` does not choose from."""
    if code in CONFIGURATIONS:
        return CONFIGURATIONS[code] if CONFIGURATIONS[code].split("_")[0] in configured else None
    iso3 = code if code in configured else iso3_of(code)
    scripts = configured.get(iso3, [])
    if len(scripts) > 1 and SCRIPTS.get(code) not in scripts:
        raise ValueError(f"FineWeb-2 configures {iso3} in {', '.join(scripts)}: choose lid.176's in SCRIPTS")
    return f"{iso3}_{SCRIPTS.get(code, scripts[0])}" if scripts else None


# datatrove's word tokenizers (its table's `type`) as the segmenters of `segmenters.py` name them (`:CODE`: with the
# table's `tok_code`); its whitespace tokenizer is spaCy's multilingual one.
SEGMENTER_KINDS = {"SpaCyTokenizer": "spacy", "IndicNLPTokenizer": "indic", "StanzaTokenizer": "stanza",
                   "ThaiTokenizer": "thai", "KiwiTokenizer": "kiwi", "KhmerTokenizer": "khmer", "LaoTokenizer": "lao",
                   "TibetanTokenizer": "tibetan", "BurmeseTokenizer": "burmese", "WhitespaceTokenizer": "spacy"}


def read_tokenizers(path: Path) -> dict[str, str]:
    """datatrove's `tokenizer_assignment.csv`: the segmenter of each configuration it assigns one (`iso3_Script`)."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    segmenters = {}
    for row in rows:
        kind = SEGMENTER_KINDS.get(row["type"])
        if kind is None:
            continue
        code = "xx" if row["type"] == "WhitespaceTokenizer" else row["tok_code"]
        segmenters.setdefault(f"{row['code_3']}_{row['script']}", f"{kind}:{code}" if code else kind)
    if not segmenters:
        raise ValueError(f"{path}: no word tokenizer assigned (not datatrove's tokenizer_assignment.csv)")
    return segmenters


# The language score. FineWeb-2 set each language's minimum as GlotLID's confidence on the pages GlotLID gave the
# language, their median less their standard deviation, kept within 0.3 and 0.9; lid.176's confidence is another
# model's number, so where lid.176 was measured on enough pages of a language (`CONFIDENCE_TABLE`, written by
# `python -m benchmarks.fineweb2_language_score --table`) the same rule is applied to its numbers where it lowers
# the threshold (`min_confidence`), and elsewhere FineWeb-2's threshold is kept as it is.
CONFIDENCE_TABLE = DEFAULT_PACKS.with_name("lid176_confidence.json")
MEASURED_PAGES = 10
SCORE_BOUNDS = (0.3, 0.9)


def confidence_row(confidences: list[float]) -> dict:
    """The measured row of a language: its pages, and the median, 5th percentile and (population) standard
    deviation of lid.176's confidence on them, to 4 digits."""
    p5 = statistics.quantiles(confidences, n=20, method="inclusive")[0] if len(confidences) > 1 else confidences[0]
    return {"pages": len(confidences), "median": round(statistics.median(confidences), 4), "p5": round(p5, 4),
            "sd": round(statistics.pstdev(confidences), 4)}


def min_confidence(fineweb2_score: float, row: dict | None) -> tuple[float, str]:
    """The minimum lid.176 confidence of a language whose FineWeb-2 (GlotLID) score is `fineweb2_score`, measured
    as `row` (`confidence_row`, or None), and where it comes from: FineWeb-2's rule on lid.176's numbers where it
    gives less (lid.176 less sure of the language's pages than GlotLID's threshold assumes), FineWeb-2's score
    where it gives more (the measured pages are gold pages, narrower in spread than a crawl, so the rule on them
    would drop true pages FineWeb-2 kept) or where under `MEASURED_PAGES` pages were measured."""
    if row is None or row["pages"] < MEASURED_PAGES:
        measured = f"measured on too few pages: {row['pages']}, under {MEASURED_PAGES}" if row else "not measured"
        return fineweb2_score, f"FineWeb-2's GlotLID score (lid.176's confidence {measured})"
    low, high = SCORE_BOUNDS
    value = round(max(low, min(high, row["median"] - row["sd"])), 3)
    rule = (f"FineWeb-2's rule on lid.176's confidence over {row['pages']} developer-corpus pages (median "
            f"{row['median']} less sd {row['sd']}, within {low}-{high})")
    if value >= fineweb2_score:
        return fineweb2_score, f"FineWeb-2's GlotLID score, not raised to {value}: {rule}"
    return value, f"{rule}, under FineWeb-2's GlotLID score {fineweb2_score}"


def read_confidence_table(path: Path) -> dict[str, dict]:
    """The measured rows by language of a table `benchmarks.fineweb2_language_score --table` wrote."""
    rows = json.loads(path.read_text(encoding="utf-8"))["languages"]
    for language, row in rows.items():
        if not all(isinstance(row.get(key), (int, float)) for key in ("pages", "median", "p5", "sd")):
            raise ValueError(f"{path}: {language}'s row needs pages, median, p5 and sd (numbers)")
    return rows


def pack_of(configuration: dict, name: str, words: str, measured: dict | None = None) -> dict:
    """A pack from one FineWeb-2 configuration (`name`: its file's name, `iso3_Script`), counting words by `words`,
    its minimum lid.176 confidence from `measured` (its row of the confidence table, or None: `min_confidence`)."""
    thresholds = {name: configuration[key] for name, key in SCALAR_KEYS.items()}
    for kind in ("top_n_grams", "dup_n_grams"):
        for n, share in configuration[kind]:
            thresholds[f"{gopher.REPETITION}.{'top' if kind == 'top_n_grams' else 'dup'}_{n}_gram"] = share
    threshold, origin = min_confidence(configuration["language_score"], measured)
    return {"fineweb2": name, "language_score": configuration["language_score"], "min_confidence": threshold,
            "min_confidence_origin": origin,
            "stop_words": list(configuration["stopwords"]), "thresholds": dict(sorted(thresholds.items())),
            "words": words}


def build_packs(configs: Path, tokenizers: Path, confidence: Path = CONFIDENCE_TABLE) -> dict:
    """The pack file's content from FineWeb-2's `configs` folder, datatrove's `tokenizers` table and the measured
    `confidence` table."""
    segmenters = read_tokenizers(tokenizers)
    measured = read_confidence_table(confidence)
    configured: dict[str, list[str]] = defaultdict(list)
    for path in sorted(configs.glob("*.yml")):
        iso3, _, script = path.stem.partition("_")
        configured[iso3].append(script)
    if not configured:
        raise ValueError(f"{configs}: no FineWeb-2 configuration (*.yml)")
    packs = {}
    for code in sorted(known_languages()):
        name = configuration_of(code, configured)
        if name is not None:
            if name not in segmenters:
                raise ValueError(f"{tokenizers}: no word tokenizer for {name} (lid.176's {code})")
            packs[code] = pack_of(yaml.safe_load((configs / f"{name}.yml").read_text(encoding="utf-8")), name,
                                  segmenters[name], measured.get(code))
    content = {"format": FORMAT, "notice": NOTICE, "configurations": sum(map(len, configured.values())),
               "packs": packs}
    check_packs(content, str(configs))
    return content


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.fineweb2_packs", description=__doc__.split("\n\n")[0])
    parser.add_argument("configs", type=Path, help="FineWeb-2's configs/ folder (iso3_Script.yml files)")
    parser.add_argument("--tokenizers", type=Path, required=True,
                        help="datatrove's assets/tokenizer_assignment.csv (the word tokenizer of each configuration)")
    parser.add_argument("--confidence", type=Path, default=CONFIDENCE_TABLE,
                        help="lid.176's confidence measured per language (default: the project's table, written by "
                             "python -m benchmarks.fineweb2_language_score --table)")
    parser.add_argument("--output", type=Path, required=True, help="the pack file to write (JSON)")
    options = parser.parse_args(argv)
    try:
        content = build_packs(options.configs, options.tokenizers, options.confidence)
    except (OSError, ValueError, KeyError, yaml.YAMLError, csv.Error) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(content, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                              encoding="utf-8")
    print(f"{len(content['packs'])} packs of {len(known_languages())} lid.176 languages from "
          f"{content['configurations']} FineWeb-2 configurations: {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
