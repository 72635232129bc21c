"""benchmarks.throughput builds its commands from the corpus it is given (no timing here)."""

import benchmarks.throughput as throughput


def test_fixed_cost_step_runs_on_the_smallest_file_of_the_given_corpus(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    (corpus / "warc").mkdir(parents=True)
    (corpus / "warc" / "big.warc.gz").write_bytes(b"x" * 100)
    (corpus / "warc" / "small.warc.gz").write_bytes(b"x" * 10)
    # The default corpus is somewhere else (or absent): the step must not look there.
    monkeypatch.setattr(throughput, "DEFAULT_CORPUS", tmp_path / "elsewhere")
    commands = throughput.fixed_cost_commands(corpus, tmp_path / "work")
    smallest = str(corpus / "warc" / "small.warc.gz")
    assert len(commands) == 2
    for command in commands.values():
        assert command[command.index("--input") + 1] == smallest
        assert command.count("--input") == 1


def test_fixed_cost_step_without_warc_files_is_a_clear_error(tmp_path):
    (tmp_path / "warc").mkdir()
    try:
        throughput.fixed_cost_commands(tmp_path, tmp_path / "work")
    except SystemExit as error:
        assert "no WARC files" in str(error)
    else:
        raise AssertionError("no error for a corpus without WARC files")
