"""The quick loop, `python -m pytest -m "not slow"`, runs some of every test module."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def marked_slow(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(ast.unparse(decorator).endswith("mark.slow") for decorator in decorators)


def test_every_test_module_has_a_test_that_is_not_slow():
    all_slow = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_slow = any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
                          and "slow" in ast.unparse(node.value) for node in tree.body)
        quick = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                 and node.name.startswith("test_") and not marked_slow(node)]
        if module_slow or not quick:
            all_slow.append(path.name)
    assert all_slow == []
