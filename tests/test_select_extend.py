"""`python -m pipeline.select SOURCE --extend CORPUS`: a new crawl's selection added to an earlier corpus, as a build
with `--extend` adds it: the pages whose content CORPUS holds left out, the shards, side files and index the
filtering build's with the same `--extend`, byte for byte, and `--rebuild` repeating it; what cannot be extended
refused in one line."""

from __future__ import annotations

import dataclasses
import filecmp
import json
from pathlib import Path

import pytest

from pipeline.sample import warc_bytes
from tests.helpers import corpus_records, page
from tests.test_cli import run_main
from tests.test_quality_filters import GOOD, GOOD_VARIANT, PARAGRAPHS, THIN
from tests.test_select import refused, run_select
from tests.test_select_corpus import compared_files

# A page the first crawl does not have.
NEW = dataclasses.replace(GOOD, url="https://en.example.org/cranes-reversed", body=page(
    "".join(f"<p>{line}</p>" for line in reversed(PARAGRAPHS.split("\n"))), title="Cranes").encode("utf-8"))
# The second crawl: GOOD again (its content is in the first corpus), GOOD_VARIANT (GOOD's once C4 removed its
# JavaScript line), a thin page and the new one.
SECOND = [dataclasses.replace(GOOD, url="https://en.example.org/cranes-later"), GOOD_VARIANT,
          dataclasses.replace(THIN, url="https://en.example.org/thin-again"), NEW]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> dict[str, Path]:
    """The first crawl's corpus (fineweb-recipe), the second crawl annotated, and filtered extending the first."""
    directory = tmp_path_factory.mktemp("extend")
    (directory / "a.warc.gz").write_bytes(warc_bytes([GOOD, THIN], filename="a.warc.gz"))
    (directory / "b.warc.gz").write_bytes(warc_bytes(SECOND, filename="b.warc.gz"))
    made = {name: directory / name for name in ("first", "annotated", "built", "gopher")}
    for name, crawl, options in (("first", "a", ()), ("annotated", "b", ("--annotate",)),
                                 ("built", "b", ("--extend", str(made["first"]))), ("gopher", "a", ())):
        quality = "gopher" if name == "gopher" else "fineweb-recipe"
        code, _, stderr = run_main(["--input", str(directory / f"{crawl}.warc.gz"), "--output", str(made[name]),
                                    "--quiet", "--quality", quality, *options])
        assert code == 0, stderr
    return made


@pytest.mark.slow
def test_a_selection_extends_a_corpus_as_a_build_does(corpora, tmp_path):
    selected = tmp_path / "selected"
    code, _, stderr = run_select([str(corpora["annotated"]), "--output", str(selected), "--quality", "fineweb-recipe",
                                  "--extend", str(corpora["first"])])
    assert code == 0, stderr
    built = corpora["built"]
    assert compared_files(selected) == compared_files(built)
    assert [name for name in compared_files(built) if not filecmp.cmp(built / name, selected / name, shallow=False)] \
        == []
    assert [record["url"] for record in corpus_records(selected)] == [NEW.url]
    manifest = json.loads((selected / "manifest.json").read_text())
    assert [entry["corpus"] for entry in manifest["options"]["extend"]] == [str(corpora["first"])]
    code, stdout, stderr = run_select(["--rebuild", str(selected / "manifest.json"), "--output", str(tmp_path / "again")])
    assert code == 0 and "byte-identical" in stdout, stdout + stderr


@pytest.mark.slow
def test_what_a_selection_cannot_extend_is_refused(corpora, tmp_path):
    source, output = str(corpora["annotated"]), tmp_path / "out"
    line = refused([source, "--output", str(output), "--quality", "fineweb-recipe", "--extend", str(corpora["gopher"])],
                   output)
    assert f"--extend {corpora['gopher']} was built with --quality" in line
    line = refused([source, "--output", str(output), "--quality", "fineweb-recipe", "--trust-corpus",
                    str(corpora["first"])], output)
    assert "is no --extend corpus" in line
    assert "--rebuild takes" in refused(["--rebuild", str(corpora["first"] / "manifest.json"), "--output", str(output),
                                         "--extend", str(corpora["first"])], output)


def test_a_rebuild_of_a_selection_takes_no_extend(tmp_path):
    # Refused from the options alone: the manifest names what the rebuild extends.
    output = tmp_path / "out"
    line = refused(["--rebuild", str(tmp_path / "manifest.json"), "--output", str(output), "--extend",
                    str(tmp_path / "earlier")], output)
    assert "--rebuild takes" in line
