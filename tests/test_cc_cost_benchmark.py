"""benchmarks.cc_cost's crawl of the records not kept: the gzip members of a crawl whose records the reader skips."""

from pipeline.sample import Capture
from tests.helpers import html_capture, outcomes_by_kind, read_bytes

import benchmarks.cc_cost as cc_cost


def test_the_not_kept_crawl_holds_the_skipped_records_and_its_first_ones(write_warc, tmp_path, monkeypatch):
    monkeypatch.setattr(cc_cost, "FIXED_RECORDS", 3)
    path = write_warc([html_capture(f"https://example.org/{index}", "<p>A page.</p>") for index in range(3)]
                      + [Capture("https://example.org/r", status=301, content_type=None)])
    _, skipped, _ = outcomes_by_kind(read_bytes(path.read_bytes()))
    files, fixed, records = cc_cost.not_kept_crawl([str(path)], tmp_path / "not-kept")
    assert records == len(skipped) == 1 + 2 * 4 + 1
    docs, skips, dead = outcomes_by_kind(read_bytes(open(files[0], "rb").read()))
    assert not docs and not dead
    assert [(skip.kind, skip.warc_record_id) for skip in skips] == [(skip.kind, skip.warc_record_id) for skip in skipped]
    _, first, _ = outcomes_by_kind(read_bytes(open(fixed[0], "rb").read()))
    assert [skip.warc_record_id for skip in first] == [skip.warc_record_id for skip in skipped[:3]]
    # Made once: a second call finds them.
    assert cc_cost.not_kept_crawl([str(path)], tmp_path / "not-kept") == (files, fixed, records)
