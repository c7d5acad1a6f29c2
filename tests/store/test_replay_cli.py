"""`perfgym eval --replay`: the same evaluation again from the store, executing nothing, with
identical metrics; a replay that lacks verdicts fails instead of running anything."""

from __future__ import annotations

import json

from small_tasks import sum_task
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.store import ResultStore
from perfgym.store.results_file import read_results


def test_eval_then_replay_reproduces_metrics_without_executing(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    tasks = [sum_task("sum-a"), sum_task("sum-b")]
    (suite / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    db = str(tmp_path / "store.sqlite")
    runner = CliRunner()
    base = ["eval", str(suite), "--store", db, "--repeats", "1", "--json"]

    first = runner.invoke(app, [*base, "--out", str(tmp_path / "first.jsonl")])
    assert first.exit_code == 0, first.output
    j1 = json.loads(first.stdout)
    assert (j1["judged"], j1["replayed"]) == (4, 0)  # baseline and reference of two tasks
    with ResultStore(db) as store:
        assert store.count_verdicts() == 4

    again = runner.invoke(app, [*base, "--replay", "--out", str(tmp_path / "again.jsonl")])
    assert again.exit_code == 0, again.output
    j2 = json.loads(again.stdout)
    # A replay builds no judge at all: every verdict came from the store.
    assert (j2["judged"], j2["replayed"]) == (0, 4)
    assert j2["models"] == j1["models"]
    _, v1 = read_results(tmp_path / "first.jsonl")
    _, v2 = read_results(tmp_path / "again.jsonl")
    assert v1 == v2

    other = runner.invoke(app, ["eval", str(suite), "--store", db, "--repeats", "2", "--json",
                                "--replay", "--out", str(tmp_path / "x.jsonl")])  # fmt: skip
    assert other.exit_code != 0 and "no stored verdict" in other.output
