"""The figures the docs quote of the developer corpus's build: checked against builds, and refreshed.

    python -m benchmarks.dev_corpus_figures [--corpus DIR] [--write]

builds the developer corpus as the docs' figures say (`python -m pipeline`'s defaults, then with each
`--fields` table row's options), takes a shard away for `pipeline.verify`'s example, counts the pages
CleanHtml sends to its child process and the gold pages whose charset is right, and prints every
figure that differs from what the docs quote (`QUOTING`); `--write` puts the builds' figures into them.
Exit status 1 when a figure is off by more than its tolerance and `--write` was not given. About 20 s
on 2 idle cores. tests/test_corpus.py checks the same figures against its own build.

Tolerance: counts and the bytes before compression exactly (the builds are byte-identical on every
machine with the pinned requirements); the bytes written, and the ratios computed from them, within
0.5 %, because zstd's output can differ between versions of the zstd library (a share in whole percent
within 1).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks import REPO
from devcorpus import default_corpus

# The pages that quote figures of the developer corpus: the terminal table, the `--fields` table and verify's
# example (output), the gold pages whose charset is right (stages), the pages sent to the child (robustness).
QUOTING = tuple(REPO / "docs" / page for page in ("output.md", "stages.md", "robustness.md"))
WRITTEN_TOLERANCE = 0.005
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

# The terminal table of a default build, after this line of docs/output.md.
TABLE = re.compile(r"(the terminal table.*?:\n\n```\n)(.*?)(```)", re.DOTALL)
# A row of the `--fields` table: what is chosen (with the options, in backquotes) and the bytes written.
FIELDS_ROW = re.compile(r"^(\| (?P<label>[^|]+) \| )(?P<written>[\d,]+)( bytes)(?: \((?P<share>[+-]\d+) %\))?( \|)$",
                        re.MULTILINE)
FIELDS_RECORDS = re.compile(r"(What each choice costs on the developer corpus \()([\d,]+)( records)")
VERIFY_EXAMPLE = re.compile(r"(without its shard\n?\s*`(?P<shard>corpus-\d{5}-of-\d{5}\.avro)`, under a manifest sealed "
                            r"again without it, gives\n?\s*`)(?P<line>report\.json: records\.kept: [^`]+)(`)")
CHARSETS = re.compile(r"(the charset is right for )([\d,]+)( of )([\d,]+)")
ISOLATED = re.compile(r"(a parse: )([\d,]+)( of the developer corpus's )([\d,]+)( pages go to the child)")


@dataclass
class Build:
    output: Path
    terminal: str  # what `python -m pipeline` printed on stdout

    @property
    def report(self) -> dict:
        return json.loads((self.output / "report.json").read_text())


def run_build(corpus: Path, output: Path, options: tuple[str, ...] = ()) -> Build:
    """A build of the developer corpus's WARC files as `python -m pipeline` makes it, in this process."""
    from pipeline import cli

    printed, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        code = cli.main(["--input", str(corpus / "warc" / "*.warc.gz"), "--output", str(output), "--quiet",
                         *options])
    if code != 0:
        raise RuntimeError(f"the build {' '.join(options) or '(defaults)'} failed, exit status {code}: "
                           f"{errors.getvalue()[-2000:]}")
    return Build(output, printed.getvalue())


def terminal_table(printed: str) -> str:
    """The report table of a build's output, without the line that says where the build is."""
    return printed.split("\nCorpus, report.json", 1)[0].rstrip("\n") + "\n"


def field_options(label: str) -> tuple[str, ...]:
    """The options a `--fields` table row names: `--clean-text`, `--fields url,text` (as backquoted in the row)."""
    return tuple(part for option in re.findall(r"`(--[a-z-]+(?: [^`]+)?)`", label) for part in option.split(" ", 1))


def quoting_text() -> str:
    """The pages that quote figures, one after the other: the `docs` that the functions below read."""
    return "\n".join(page.read_text() for page in QUOTING)


def quoted(pattern: re.Pattern, docs: str) -> re.Match:
    """Where the docs quote a figure; docs that no longer say it the way `pattern` reads are an error."""
    match = pattern.search(docs)
    if match is None:
        raise ValueError(f"the docs ({', '.join(page.name for page in QUOTING)}) no longer quote what "
                         f"{pattern.pattern!r} reads: update benchmarks/dev_corpus_figures.py with it")
    return match


def _numbers(line: str) -> list[float]:
    return [float(number.replace(",", "")) for number in NUMBER.findall(line)]


def _close(quoted: float, built: float, tolerance: float) -> bool:
    return abs(quoted - built) <= tolerance * abs(built)


def table_differences(quoted: str, built: str) -> list[str]:
    """The lines of the docs' terminal table that are not the build's: the same labels, the same numbers (those
    of the bytes written within the tolerance); which accelerator ran is no figure of the corpus."""
    quoted_lines, built_lines = quoted.splitlines(), built.splitlines()
    if len(quoted_lines) != len(built_lines):
        return [f"terminal table: {len(quoted_lines)} lines quoted, the build prints {len(built_lines)}"]
    differences = []
    for said, printed in zip(quoted_lines, built_lines):
        if NUMBER.sub("#", said) != NUMBER.sub("#", printed) and "C accelerators" not in said:
            differences.append(f"terminal table: {said.strip()!r}, the build prints {printed.strip()!r}")
            continue
        tolerance = WRITTEN_TOLERANCE if said.lstrip().startswith("written") else 0.0
        if not all(_close(a, b, tolerance) for a, b in zip(_numbers(said), _numbers(printed))):
            differences.append(f"terminal table: {said.strip()!r}, the build prints {printed.strip()!r}")
    return differences


def written_share(written: int, default_written: int) -> int:
    """A row's size against the default build's, in whole percent."""
    return round(100 * (written / default_written - 1))


def isolated_pages(corpus: Path) -> tuple[int, int]:
    """(pages CleanHtml sends to its child process, pages it cleans) of the developer corpus."""
    from devcorpus.pages import load_pages
    from transforms.stages.clean_html.guard import isolation_reason

    pages = load_pages(corpus)
    return sum(1 for page in pages if isolation_reason(page.payload) is not None), len(pages)


def right_charsets(corpus: Path) -> tuple[int, int]:
    """(gold pages whose charset Charset gets right, gold pages with a true charset) of the developer corpus."""
    from devcorpus.gold import load_gold_pages
    from devcorpus.measures import charset_agreement

    charsets = charset_agreement(load_gold_pages(corpus)[0])
    return charsets["right"], charsets["pages"]


def verify_example(build: Build, shard: str, directory: Path) -> str:
    """What `pipeline.verify` says of a copy of the build without `shard`, under a manifest sealed again."""
    from pipeline import verify
    from transforms.report.manifest import MANIFEST_NAME, seal

    copy = directory / "without-a-shard"
    shutil.copytree(build.output, copy)
    (copy / shard).unlink()
    manifest = json.loads((copy / MANIFEST_NAME).read_text())
    manifest["outputs"] = [entry for entry in manifest["outputs"] if entry["path"] != shard]
    (copy / MANIFEST_NAME).write_text(json.dumps(seal(manifest)))
    problems = [str(problem) for problem in verify.verify(str(copy))[2]]
    return next(problem for problem in problems if problem.startswith("report.json: records.kept"))


def needed_builds(docs: str) -> list[tuple[str, ...]]:
    """The options of every build the figures of `docs` come from: the default one first."""
    quoted(FIELDS_ROW, docs)
    return list(dict.fromkeys([(), *(field_options(row["label"]) for row in FIELDS_ROW.finditer(docs))]))


def figures_of(docs: str, builds: dict[tuple[str, ...], Build], corpus: Path, scratch: Path) -> dict[str, str]:
    """What each figure of `docs` is in these builds, as the docs write it, by the pattern's match."""
    default = builds[()]
    figures = {"table": terminal_table(default.terminal),
               "records": f"{default.report['records']['kept']:,}"}
    default_written = default.report["bytes"]["written"]
    for row in FIELDS_ROW.finditer(docs):
        written = builds[field_options(row["label"])].report["bytes"]["written"]
        figures[f"written {row['label']}"] = f"{written:,}"
        if row["share"]:
            figures[f"share {row['label']}"] = f"{written_share(written, default_written):+d}"
    example = quoted(VERIFY_EXAMPLE, docs)
    figures["verify"] = verify_example(default, example["shard"], scratch)
    isolated, pages = isolated_pages(corpus)
    figures["isolated"], figures["pages"] = f"{isolated:,}", f"{pages:,}"
    right, gold = right_charsets(corpus)
    figures["charsets right"], figures["charset pages"] = f"{right:,}", f"{gold:,}"
    return figures


def differences(docs: str, figures: dict[str, str]) -> list[str]:
    """Every figure of `docs` that is not the builds' within its tolerance."""
    found = table_differences(quoted(TABLE, docs)[2], figures["table"])
    quoted_records = quoted(FIELDS_RECORDS, docs)[2]
    if quoted_records != figures["records"]:
        found.append(f"fields table: {quoted_records} records quoted, the build kept {figures['records']}")
    for row in FIELDS_ROW.finditer(docs):
        built = figures[f"written {row['label']}"]
        if not _close(_numbers(row["written"])[0], _numbers(built)[0], WRITTEN_TOLERANCE):
            found.append(f"fields table, {row['label']}: {row['written']} bytes quoted, the build wrote {built}")
        share = figures.get(f"share {row['label']}")
        if row["share"] and abs(int(row["share"]) - int(share)) > 1:
            found.append(f"fields table, {row['label']}: {row['share']} % quoted, the build's is {share} %")
    quoted_verify = re.sub(r"\s+", " ", quoted(VERIFY_EXAMPLE, docs)["line"])
    if quoted_verify != figures["verify"]:
        found.append(f"verify example: {quoted_verify!r} quoted, verify says {figures['verify']!r}")
    isolated = quoted(ISOLATED, docs)
    if (isolated[2], isolated[4]) != (figures["isolated"], figures["pages"]):
        found.append(f"isolation: {isolated[2]} of {isolated[4]} pages quoted, {figures['isolated']} of "
                     f"{figures['pages']} go to the child")
    charsets = quoted(CHARSETS, docs)
    if (charsets[2], charsets[4]) != (figures["charsets right"], figures["charset pages"]):
        found.append(f"charsets: right for {charsets[2]} of {charsets[4]} quoted, {figures['charsets right']} of "
                     f"{figures['charset pages']} now")
    return found


def refreshed(docs: str, figures: dict[str, str]) -> str:
    """`docs` with the builds' figures in place of the quoted ones."""
    docs = TABLE.sub(lambda match: match[1] + figures["table"] + match[3], docs)
    docs = FIELDS_RECORDS.sub(lambda match: match[1] + figures["records"] + match[3], docs)

    def row(match: re.Match) -> str:
        label = match["label"]
        share = f" ({figures[f'share {label}']} %)" if match["share"] else ""
        return match[1] + figures[f"written {label}"] + match[4] + share + match[6]

    docs = FIELDS_ROW.sub(row, docs)
    docs = VERIFY_EXAMPLE.sub(lambda match: match[1] + figures["verify"] + match[4], docs)
    docs = ISOLATED.sub(lambda match: match[1] + figures["isolated"] + match[3] + figures["pages"] + match[5], docs)
    return CHARSETS.sub(lambda match: match[1] + figures["charsets right"] + match[3] + figures["charset pages"],
                        docs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dev_corpus_figures",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--write", action="store_true", help="put the builds' figures into the docs")
    args = parser.parse_args(argv)
    if not (args.corpus / "warc").is_dir():
        parser.error(f"no developer corpus at {args.corpus} (no warc/); set --corpus or WEBCORPUS_CORPUS")
    docs = quoting_text()
    with tempfile.TemporaryDirectory(prefix="dev-corpus-figures-") as scratch:
        builds = {options: run_build(args.corpus, Path(scratch) / f"build-{index}", options)
                  for index, options in enumerate(needed_builds(docs))}
        figures = figures_of(docs, builds, args.corpus, Path(scratch))
    found = differences(docs, figures)
    for difference in found:
        print(difference)
    if args.write:
        for page in QUOTING:  # each pattern matches in the one page that quotes its figure
            page.write_text(refreshed(page.read_text(), figures))
        print(f"the docs: refreshed, {len(found)} differed" if found else "the docs: every figure is current")
        return 0
    print(f"{len(found)} figures of the docs are not current" if found else "every figure of the docs is current")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
