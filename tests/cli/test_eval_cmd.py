"""`perfgym eval`: how many measured runs each protocol gets; bad input is one line on stderr,
exit 2, no traceback (issue 13, hole 9) and, for paths, refused before anything is judged (a
verdict is never lost to an unwritable --out); a replay reproduces the metrics executing
nothing."""

from __future__ import annotations

import json

import pytest
from cli_helpers import one_line_error, perfgym
from small_tasks import SUM, sum_task
from typer.testing import CliRunner

from perfgym.cli import app, eval_cmd, eval_run
from perfgym.enamel.protocol import REPEATS as ENAMEL_REPEATS
from perfgym.store import ResultStore
from perfgym.store.results_file import read_results


def test_repeats_default_is_the_protocols_own():
    assert eval_cmd.resolve_repeats(None, enamel=False) == eval_cmd.JUDGE_REPEATS == 3
    assert eval_cmd.resolve_repeats(None, enamel=True) == ENAMEL_REPEATS == 6


@pytest.mark.parametrize("enamel", [False, True])
@pytest.mark.parametrize("repeats", [1, 3, 6, 9])
def test_an_explicit_repeats_is_honoured(repeats, enamel):
    assert eval_cmd.resolve_repeats(repeats, enamel=enamel) == repeats


@pytest.mark.parametrize(("given", "reaches"), [(["--repeats", "3"], 3), ([], ENAMEL_REPEATS)])
def test_enamel_protocol_receives_the_resolved_repeats(tmp_path, monkeypatch, given, reaches):
    seen = []
    monkeypatch.setattr(eval_run, "run_enamel", lambda tasks, labels, out, repeats, as_json, **_:
                        seen.append(repeats))  # fmt: skip
    out = tmp_path / "o.jsonl"
    args = ["eval", "enamel", "--task", "HumanEval/0", "--no-store", "--out", str(out), *given]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen == [reaches]


@pytest.mark.parametrize(
    ("given", "reaches"), [([], "sequential"), (["--enamel-timing", "paired"], "paired")]
)
def test_enamel_protocol_receives_its_timing_sequential_by_default(tmp_path, monkeypatch, given,
                                                               reaches):  # fmt: skip
    seen = []
    monkeypatch.setattr(eval_run, "run_enamel", lambda *a, timing, **_: seen.append(timing.value))
    args = ["eval", "enamel", "--task", "HumanEval/0", "--no-store", "--out",
            str(tmp_path / "o.jsonl"), *given]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen == [reaches]


def test_enamel_timing_refuses_an_unknown_order_and_other_protocols(tmp_path, suite):
    p = perfgym("eval", "enamel", "--task", "HumanEval/0", "--enamel-timing", "wall",
                "--no-store", "--out", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, "--enamel-timing", "paired, sequential", "'wall'")
    p = perfgym("eval", suite, "--enamel-timing", "paired", "--no-store",
                "--out", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, "--enamel-timing applies to ENAMEL's protocol only")


def test_non_utf8_candidates_file_names_the_file_and_line(tmp_path, suite):
    cands = tmp_path / "c.jsonl"
    line = json.dumps({"task_id": "sum-a", "source": SUM}).encode()
    cands.write_bytes(line + b"\n" + b'{"task_id": "sum-a", "source": "\xff"}\n')
    p = perfgym("eval", suite, "--candidates", cands, "--no-store", "--no-report",
                "--out", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, f"{cands}:2:", "not UTF-8", "0xff")


@pytest.mark.parametrize("repeats", ["0", "-3"])
def test_repeats_below_one(tmp_path, suite, repeats):
    p = perfgym("eval", suite, "--repeats", repeats, "--no-store", "--out", tmp_path / "o.jsonl")
    one_line_error(p, "--repeats", repeats)


@pytest.mark.parametrize("where", ["under-a-file", "a-directory"])
def test_unwritable_out_is_refused_before_judging(tmp_path, suite, where):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    out = tmp_path / "afile" / "o.jsonl" if where == "under-a-file" else tmp_path / "adir"
    db = tmp_path / "s.sqlite"
    p = perfgym("eval", suite, "--out", out, "--store", db, "--repeats", "1", "--no-report")
    one_line_error(p, "cannot write results file", str(out))
    # Refused up front: nothing was judged (no verdict reached the store either).
    if db.exists():
        with ResultStore(db) as store:
            assert store.count_verdicts() == 0


def test_unwritable_or_foreign_store(tmp_path, suite):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "o.jsonl"
    p = perfgym("eval", suite, "--store", tmp_path / "afile" / "s.sqlite", "--out", out)
    one_line_error(p, "cannot write result store", "is not a directory")
    notdb = tmp_path / "notdb.sqlite"
    notdb.write_text("this is not SQLite\n" * 100)
    p = perfgym("eval", suite, "--store", notdb, "--out", out, "--repeats", "1", "--no-report")
    one_line_error(p, "result store", "not a database")


def test_eval_writes_results_and_store_then_reports(tmp_path, suite):
    """The good path still works with the checks in front of it (and a fresh nested --out
    directory is created)."""
    out, db = tmp_path / "new" / "dir" / "o.jsonl", tmp_path / "s.sqlite"
    p = perfgym("eval", suite, "--out", out, "--store", db, "--repeats", "1", "--no-report")
    assert p.returncode == 0, p.stderr[-3000:]
    assert out.is_file() and not list(out.parent.glob("*.probe"))
    with ResultStore(db) as store:  # baseline and reference share a source: one key
        assert store.count_verdicts() >= 1


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
