"""benchmarks/filters.py's datatrove helper starts in a Python of its own, whose standard library nothing in the
helper's folder shadows (benchmarks/select.py would shadow `select`)."""

from __future__ import annotations

import sys

from benchmarks import filters as filters_benchmark


def test_the_datatrove_helper_imports_the_standard_librarys_modules_not_its_neighbours(tmp_path, monkeypatch):
    (tmp_path / "select.py").write_text("raise ImportError('the helper folder shadowed the standard library')\n")
    helper = tmp_path / "helper.py"
    helper.write_text("import json, selectors, sys\njson.dump({'decisions': {}}, open(sys.argv[2], 'w'))\n")
    monkeypatch.setattr(filters_benchmark, "HELPER", helper)
    assert filters_benchmark.theirs(sys.executable, [], tmp_path) == {"decisions": {}}
