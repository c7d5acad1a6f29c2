"""Selective validation in the sandbox: broken and flaky tests found by shuffled runs and left
out, a patch runs only the tests it affects, an edge case it breaks is caught, the full suite."""

from __future__ import annotations

import pytest

from perfgym.agent.errors import ValidationSetupError
from perfgym.agent.validation import build_baseline, run_tests
from perfgym.repos.copy import make_copy
from perfgym.repos.shell import apply_patch

FLAKY = """\
import os


def test_flaky():
    # fails in about half of the processes (the pid's parity)
    assert os.getpid() % 2 == 0 or os.urandom(1)[0] < 128


def test_broken():
    assert False
"""
EDGE_BREAKING = """\
--- a/dedup/_core.py
+++ b/dedup/_core.py
@@ -1,6 +1,2 @@
 def dedup(items):
-    out = []
-    for x in items:
-        if x not in out:
-            out.append(x)
-    return out
+    return list(set(items))
"""
OTHER_ONLY = """\
--- a/dedup/other.py
+++ b/dedup/other.py
@@ -1,2 +1,2 @@
 def double(x):
-    return 2 * x
+    return x + x
"""


@pytest.fixture(scope="module")
def task(agent_cache):  # type: ignore[no-untyped-def]
    from agent_repo import write_task

    t = write_task(agent_cache / "tasks" / "dedup-flaky", id="dedup-flaky")
    (t.folder / "repo" / "tests" / "test_flaky.py").write_text(FLAKY)
    return t


@pytest.fixture(scope="module")
def baseline(sandbox, task):  # type: ignore[no-untyped-def]
    c = make_copy(task.repo, folder=task.folder)
    try:
        return build_baseline(sandbox, c.path, task, runs=3, seed=1)
    finally:
        c.remove()


def test_baseline_drops_broken_and_records_flaky(baseline):  # type: ignore[no-untyped-def]
    assert baseline.broken == ["tests/test_flaky.py::test_broken"]
    assert "tests/test_dedup.py::test_order" in baseline.stable
    assert "tests/test_flaky.py::test_broken" not in baseline.stable
    assert baseline.selectable and baseline.database[:16] == b"SQLite format 3\x00"
    assert baseline.runs == 3
    # test_flaky passes or fails by chance: wherever it failed it is flaky, never stable
    assert ("tests/test_flaky.py::test_flaky" in baseline.flaky) != (
        "tests/test_flaky.py::test_flaky" in baseline.stable
    )


def _patched(task, patch):  # type: ignore[no-untyped-def]
    c = make_copy(task.repo, folder=task.folder)
    apply_patch(c, patch)
    return c


def test_patch_runs_only_affected_tests(sandbox, task, baseline):  # type: ignore[no-untyped-def]
    c = _patched(task, OTHER_ONLY)
    try:
        selected = run_tests(sandbox, c.path, task, baseline)
        full = run_tests(sandbox, c.path, task, baseline, full=True)
    finally:
        c.remove()
    assert selected.passed and selected.mode == "selected"
    assert selected.ran == 1  # tests/test_other.py::test_double alone
    assert full.passed and not full.missing
    assert full.ran == len(baseline.stable) >= 4


def test_edge_case_breakage_is_caught_by_selected_tests(sandbox, task, baseline):  # type: ignore[no-untyped-def]
    c = _patched(task, EDGE_BREAKING)
    try:
        res = run_tests(sandbox, c.path, task, baseline)
    finally:
        c.remove()
    assert not res.passed
    assert res.failed == ["tests/test_dedup.py::test_order"]
    assert res.ran == 3 and "test_order" in res.output


def test_failing_test_command_is_a_setup_error(sandbox, dedup_task):  # type: ignore[no-untyped-def]
    task = dedup_task.model_copy(update={"test_command": "python -m pytest -q tests/nope.py"})
    c = make_copy(task.repo, folder=task.folder)
    try:
        with pytest.raises(ValidationSetupError, match="fails on the original|passes reliably"):
            build_baseline(sandbox, c.path, task, runs=1)
    finally:
        c.remove()
