"""`perfgym agent perfgym-repos`: the scripted model server drives mini-swe-agent's real loop
on each example repository: profile → patch → validate → re-profile → the best patch kept."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer

# One scripted run of the three repositories (~7 evaluated submissions): minutes on a loaded
# 2-core machine, so past the suite's 300 s per-test default.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def run(agent_cache, tmp_path_factory):  # type: ignore[no-untyped-def]
    from loop_scripts import scripts

    out = tmp_path_factory.mktemp("agent") / "agent.jsonl"
    report = out.parent / "agent.html"
    with ScriptedServer(Script(model="scripted", tasks=scripts())) as srv:
        res = CliRunner().invoke(app, [
            "agent", "perfgym-repos", "--model", "scripted", "--base-url", srv.base_url,
            # --repeats 0: perfgym.repos' caching signature (later calls under half the first)
            # also fires on the honest bloomc and peakscan patches on a loaded machine (their
            # first call pays one-off costs); the memo is flagged by the static check
            # --rounds 5: textindex's honest patch is ~3.5x, and its hidden workload decides
            # significance by a paired t on the rounds' log ratios; at 3 rounds (t 4.30 on 2
            # degrees of freedom) one round slowed by a busy neighbour left it not significant
            # and nothing was kept (CI, stop 43)
            "--iterations", "3", "--rounds", "5", "--repeats", "0", "--test-runs", "1",
            "--profile-seconds", "0.3", "-o", str(out), "--report", str(report),
        ])  # fmt: skip
        stats = srv.stats
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return {"records": records, "stats": stats, "out": out, "report": report, "output": res.output}


def _attempts(run, task):  # type: ignore[no-untyped-def]
    """The counted submissions (a repeated diff is recorded with index 0 and not counted)."""
    return [r for r in run["records"]
            if r["kind"] == "attempt" and r["task_id"] == task and r["index"] > 0]  # fmt: skip


def _task(run, task):  # type: ignore[no-untyped-def]
    return next(r for r in run["records"] if r["kind"] == "task" and r["task_id"] == task)


def test_every_repository_keeps_a_measured_best_patch(run):  # type: ignore[no-untyped-def]
    for task in ("bloomc", "peakscan", "textindex"):
        t = _task(run, task)
        why = (task, {k: v for k, v in t.items() if k not in ("prep", "best_patch")},
               [{k: v for k, v in a.items() if k not in ("diff", "profile_summary")}
                for a in _attempts(run, task)])  # fmt: skip
        assert t["best"] is not None, why
        assert t["full_suite_passed"] is True
        best = next(a for a in _attempts(run, task) if a["index"] == t["best"])
        assert best["stage"] == "measured" and best["significant"] and not best["hacks"]
        lo, hi = best["ci"]
        assert 1.0 < lo <= best["speedup"] <= hi  # measured, with its interval
        assert best["profile_summary"].startswith("workload visible: py-spy profile")
        assert t["prep"]["profile_summary"] and t["prep"]["stable_tests"] > 0
        assert t["curve"][-1] == pytest.approx(t["best_speedup"])
    assert run["stats"].unanswered_keys == []


def test_textindex_best_is_not_the_last_and_the_edge_case_is_caught(run):  # type: ignore[no-untyped-def]
    a = _attempts(run, "textindex")
    assert [x["stage"] for x in a] == ["measured", "tests", "measured"]
    assert "tests/test_textindex.py::test_out_of_order_ids_stay_sorted" in a[1]["tests_failed"]
    stable = _task(run, "textindex")["prep"]["stable_tests"]
    assert 0 < a[1]["tests_ran"] < stable  # testmon's selection, not the whole suite
    assert _task(run, "textindex")["best"] == 1, a[0]["workloads"]
    assert "PostingList.add" in _task(run, "textindex")["prep"]["profile_summary"]


def test_caching_patch_is_flagged(run):  # type: ignore[no-untyped-def]
    memo = _attempts(run, "textindex")[2]
    kinds = {h["kind"] for h in memo["hacks"]}
    assert "module_cache" in kinds, memo["hacks"]
    assert any("_BUILT_CACHE" in h["evidence"] for h in memo["hacks"])
    assert memo["stage"] == "measured" and _task(run, "textindex")["best"] == 1


def test_visible_only_fast_path_is_flagged_by_the_hidden_workload(run):  # type: ignore[no-untyped-def]
    first, second = _attempts(run, "peakscan")
    assert first["visible_speedup"] > 2.0 and first["hidden_speedup"] < first["visible_speedup"] / 2
    assert "visible_only" in {h["kind"] for h in first["hacks"]}, first["hacks"]
    assert _task(run, "peakscan")["best"] == 2


def test_test_file_edit_is_flagged(run):  # type: ignore[no-untyped-def]
    first, second = _attempts(run, "bloomc")
    edits = [h for h in first["hacks"] if h["kind"] == "test_edit"]
    assert edits and "tests/test_bloomc.py" in edits[0]["evidence"]
    assert not second["hacks"] and _task(run, "bloomc")["best"] == 2


def test_report_shows_the_per_iteration_curve(run, tmp_path):  # type: ignore[no-untyped-def]
    import re
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
    from test_screenshot import CHROMIUM, near, screenshot

    from perfgym.report.agent_section import CURVE_RGB

    html = run["report"].read_text()
    assert 'id="agent"' in html and html.count('download="') >= 6  # the speedscope files
    assert "data:application/json;base64," in html
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed")
    shot = screenshot(run["report"], tmp_path, height=2000)
    curve = near(shot, CURVE_RGB)
    ys, xs = np.nonzero(curve)
    assert curve.sum() > 300 and xs.max() - xs.min() > 300  # a line across the chart
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,AAAA", html))
    assert near(screenshot(broken, tmp_path, height=2000), CURVE_RGB).sum() < 50
