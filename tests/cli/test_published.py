"""`perfgym eval PATH --published` against a recomputation written from the raw JSON files.

The expectation below reads each model's eval_result.json with nothing but `json` and applies
the documented rules (docs/metrics.md, "PerfCodeBench published results: edge-case rules"):
the task set is every task with published results (skipping the malformed ones), a model with
no usable candidate is NX, each model's own baseline/reference are used, and a failed one
withholds only the columns that need it.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from perfgym.cli import app

TREE = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "published" / "executable_tasks"
REAL = os.environ.get("PERFGYM_PERFCODEBENCH", "")
needs_real = pytest.mark.skipif(
    not REAL,
    reason="PERFGYM_PERFCODEBENCH (a PerfCodeBench checkout's executable_tasks/) is not set; "
    "the published repository is not on this machine",
)


def _section_time(section: dict[str, Any] | None) -> float | None:
    if not section or section.get("status") != "ok" or section.get("all_ok") is False:
        return None
    median = section.get("median_elapsed_ns")
    return median / 1e9 if median and median > 0 else None


def recompute(tree: Path = TREE, skip: frozenset[str] = frozenset()) -> dict[str, dict[str, float]]:
    """CRR/FBR/RBR/CGRE per model from the raw files, by hand (`skip`: tasks left out)."""
    tasks: dict[str, dict[str, dict[str, Any]]] = {}
    for task_dir in sorted(p for p in tree.iterdir() if p.is_dir()):
        if task_dir.name in skip:
            continue
        try:
            json.loads((task_dir / "instance.json").read_text())
            files = {p.parent.name: json.loads(p.read_text())
                     for p in sorted(task_dir.glob("candidate/*/eval_result.json"))}  # fmt: skip
        except json.JSONDecodeError:
            continue  # malformed: skipped for every model
        if files:
            tasks[task_dir.name] = files
    models = sorted({m for files in tasks.values() for m in files})
    out = {}
    for model in models:
        crr = fbr = rbr = gre = 0.0
        for files in tasks.values():
            r = files.get(model)
            c = r and r.get("candidate")
            if not c or c.get("status") != "ok" or c.get("all_ok") is False:
                continue
            crr += 1
            tc, tb, tr = (_section_time(c), _section_time(r.get("baseline")),
                          _section_time(r.get("reference")))  # fmt: skip
            if tc is not None and tb is not None and tc < tb:
                fbr += 1
            if tc is not None and tr is not None and tc <= tr:
                rbr += 1
            if tc is not None and tb is not None and tr is not None:
                gre += (
                    (1.0 if tc < tb else 0.0) if tb <= tr else min(1, max(0, (tb - tc) / (tb - tr)))
                )
        n = len(tasks)
        out[model] = {"crr": crr / n, "fbr": fbr / n, "rbr": rbr / n, "cgre": gre / n}
    return out


@pytest.fixture(scope="module")
def published() -> dict[str, Any]:
    result = CliRunner().invoke(app, ["eval", str(TREE), "--published", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_published_table_equals_the_hand_recomputation(published: dict[str, Any]) -> None:
    expected = recompute()
    got = {
        r["model"]: {k: m["value"] for k, m in r["metrics"].items()} for r in published["models"]
    }
    assert set(got) == set(expected) == {"fast-model", "hasty-model", "silent-model", "wrong-model"}
    for model, columns in expected.items():
        for column, value in columns.items():
            assert got[model][column] == pytest.approx(value, abs=1e-12), (model, column)
    # The fixture exercises the rules: something to score, and not everything equal.
    assert expected["fast-model"]["cgre"] > 0.5 and expected["hasty-model"]["fbr"] == 0


def test_missing_candidates_and_unknown_sections_are_nx(published: dict[str, Any]) -> None:
    rows = {r["model"]: r for r in published["models"]}
    assert rows["silent-model"]["stages"] == {"NX": 2}
    # wrong-model has no directory under py_range_sums: NX there, its error is NR.
    assert rows["wrong-model"]["stages"] == {"NX": 1, "NR": 1}


def test_each_model_uses_its_own_baseline(published: dict[str, Any]) -> None:
    """hasty-model's own file says its baseline timed out, while fast-model's says ok: the
    hasty candidate keeps CRR and earns no FBR/CGRE, although another file has a baseline."""
    hasty = next(r for r in published["models"] if r["model"] == "hasty-model")
    assert hasty["metrics"]["crr"]["value"] == 1.0
    assert hasty["metrics"]["fbr"]["value"] == 0.0 and hasty["metrics"]["cgre"]["value"] == 0.0
    files = [
        json.loads(p.read_text()) for p in TREE.glob("py_range_sums/candidate/*/eval_result.json")
    ]
    assert {f["baseline"]["status"] for f in files} == {"ok", "timeout", "unknown"}


def test_malformed_files_skip_their_task_with_one_line(published: dict[str, Any]) -> None:
    skipped = {e["task"]: e["reason"] for e in published["skipped"]}
    assert set(skipped) == {"c_broken_instance", "go_broken_result"}
    assert "malformed" in skipped["c_broken_instance"]
    assert "invalid JSON" in skipped["go_broken_result"]
    assert published["tasks"] == 2 and published["per_language"] == {"cpp": 1, "python": 1}


def test_model_selection_and_unknown_model() -> None:
    runner = CliRunner()
    one = runner.invoke(app, ["eval", str(TREE), "--published", "--model", "fast-model", "--json"])
    assert one.exit_code == 0 and [r["model"] for r in json.loads(one.stdout)["models"]] == [
        "fast-model"
    ]
    bad = runner.invoke(app, ["eval", str(TREE), "--published", "--model", "nobody"])
    assert bad.exit_code != 0 and "no published results for model(s) nobody" in bad.output


def test_recomputation_uses_real_medians() -> None:
    """The fixture figures are measurements: the medians are the medians of the samples."""
    for p in TREE.glob("*/candidate/*/eval_result.json"):
        try:
            r = json.loads(p.read_text())
        except json.JSONDecodeError:
            continue
        for s in ("baseline", "reference", "candidate"):
            if r[s].get("status") == "ok":
                assert r[s]["median_elapsed_ns"] == int(statistics.median(r[s]["all_elapsed_ns"]))


@needs_real
def test_real_published_table_equals_the_recomputation() -> None:
    """The published repository: every model's row against the same rules applied by hand, over
    the tasks perfgym could read (the skipped ones are printed with their reasons)."""
    result = CliRunner().invoke(app, ["eval", REAL, "--published", "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    for e in got["skipped"]:
        print("skipped:", e["reason"])
    expected = recompute(Path(REAL), frozenset(e["task"] for e in got["skipped"]))
    for row in got["models"]:
        values = {k: m["value"] for k, m in row["metrics"].items()}
        print(row["model"], values)
        for column, value in expected[row["model"]].items():
            assert values[column] == pytest.approx(value, abs=1e-12), (row["model"], column)
