"""A build's process imports Beam without pandas, pyarrow and pymongo (pipeline/beam_import.py), which stay
importable; `python -m pipeline.select` starts through the launcher too."""

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.sample import SAMPLE_PATH

REPO = Path(__file__).resolve().parents[1]


def test_a_build_imports_beam_without_pandas_pyarrow_or_pymongo_which_can_be_imported_after_it(tmp_path):
    pytest.importorskip("pandas", reason="pandas is not installed: Beam cannot import it anyway")
    pytest.importorskip("pymongo", reason="pymongo is not installed: Beam cannot import it anyway")
    script = (f"import sys\nfrom pipeline.launch import main\n"
              f"assert main(['--input', {str(SAMPLE_PATH)!r}, '--output', {str(tmp_path / 'out')!r}, '--quiet']) == 0\n"
              f"print('imported by the build:', sorted(name for name in ('pandas', 'pyarrow', 'bson', 'pymongo')\n"
              f"                                        if name in sys.modules))\n"
              f"import pandas, pyarrow, pymongo\nprint('imported after it:', pandas.DataFrame({{'a': [1]}}).shape,\n"
              f"                                       pyarrow.array([1]).to_pylist(), pymongo.ASCENDING)\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # (nothing of Beam's warning that it found no bson)
    assert "imported by the build: []" in run.stdout
    assert "imported after it: (1, 1) [1] 1" in run.stdout


@pytest.mark.slow
def test_python_m_pipeline_select_starts_through_the_launcher_before_its_imports():
    pytest.importorskip("pandas", reason="pandas is not installed: Beam cannot import it anyway")
    script = ("import runpy, sys\ntry:\n    runpy.run_module('pipeline.select', run_name='__main__', alter_sys=True)\n"
              "except SystemExit as end:\n    print('exit', end.code)\n"
              "print('pandas imported:', 'pandas' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", script, "--help"], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "usage: python -m pipeline.select" in run.stdout and "exit 0" in run.stdout
    assert "pandas imported: False" in run.stdout
